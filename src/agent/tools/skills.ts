import { HermesError } from "../../core/errors.js";
import type { SkillEntry, ToolEntry } from "../../runtime/registries.js";
import type { Runtime } from "../../runtime/runtime.js";
import { runningAgent } from "../agent-scope.js";
import { recordSkillUse, type SkillUse } from "../skill-usage.js";

/** What skill_view reads: the registered plugin skills, their text, the home (usage record) and the hook bus. */
export type SkillHost = Pick<Runtime, "skills" | "skillView" | "home" | "hooks" | "log">;

export const SKILL_VIEW_SCHEMA = {
  name: "skill_view",
  description:
    "Load a skill: returns the full instructions of the named skill (a `plugin:skill` name from the skills " +
    "index of the system prompt). Load a skill before following it.",
  parameters: {
    type: "object",
    properties: { name: { type: "string", description: "The qualified skill name, e.g. `audit-log:runbook`" } },
    required: ["name"],
  },
};

/** The skills index of the system prompt: every plugin skill by qualified name, with its description. */
export function skillsIndex(skills: readonly SkillEntry[]): string {
  if (!skills.length) return "";
  const lines = [...skills]
    .sort((a, b) => (a.qualified < b.qualified ? -1 : 1))
    .map((s) => `- ${s.qualified}${s.description ? `: ${s.description.replace(/\s+/g, " ").trim()}` : ""}`);
  return [
    "<available-skills>",
    "Load a skill with skill_view(name) before you follow it.",
    ...lines,
    "</available-skills>",
  ].join("\n");
}

/**
 * `skill_view`: the text of a plugin skill. A successful view is a use of the skill: it is counted in
 * `<home>/skills/.usage.json` and then on_skill_lifecycle fires with `action: "loaded"`, as the original
 * does. Offered only while some plugin has registered a skill.
 */
export function skillViewTool(host: SkillHost): Omit<ToolEntry, "owner"> {
  return {
    name: "skill_view",
    toolset: "skills",
    schema: SKILL_VIEW_SCHEMA,
    requires_env: [],
    description: SKILL_VIEW_SCHEMA.description,
    emoji: "📚",
    check_fn: () => host.skills.values().length > 0,
    handler: async (args, extra) => {
      const name = typeof args.name === "string" ? args.name.trim() : "";
      if (!name) throw new HermesError("E_AGENT_TOOL_ARGS", { message: "a non-empty 'name' string is required" });
      const entry = host.skills.get(name);
      const content = entry ? host.skillView(name) : null;
      if (!entry || content === null) {
        const known = host.skills
          .values()
          .map((s) => s.qualified)
          .sort();
        throw new HermesError("E_AGENT_TOOL_FAILED", {
          message:
            `no skill '${name}'${entry ? " (its file cannot be read)" : ""}; ` +
            `skills: ${known.join(", ") || "(none)"}`,
        });
      }
      await reportLoaded(host, name, extra);
      return JSON.stringify({ success: true, name, description: entry.description, content });
    },
  };
}

/** Count the use, then fire on_skill_lifecycle; usage is telemetry, so a failed write only skips the hook. */
async function reportLoaded(host: SkillHost, name: string, extra: Record<string, unknown>): Promise<void> {
  let use: SkillUse;
  try {
    use = await recordSkillUse(host.home, name);
  } catch (e) {
    host.log.warn(`skill usage of '${name}' not recorded (${(e as Error).message}); on_skill_lifecycle skipped`);
    return;
  }
  const payload = {
    action: "loaded",
    skill_name: name,
    // The original labels a skill outside its skills folder with a usage record as local.
    provenance: "local",
    task_id: typeof extra.task_id === "string" ? extra.task_id : "",
    session_id: typeof extra.session_id === "string" ? extra.session_id : "",
    ...use,
  };
  const agent = runningAgent.getStore();
  if (agent) await agent.hooks.observe("on_skill_lifecycle", payload);
  else await host.hooks.observe("on_skill_lifecycle", payload);
}
