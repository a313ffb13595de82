import type { ToolEntry } from "../../runtime/registries.js";
import { delegateTool } from "./delegate.js";
import { type SkillHost, skillViewTool } from "./skills.js";

export type AgentToolHost = SkillHost;

/** The tools that act on the agent itself: skill_view (plugin skills) and delegate_task (child agents). */
export function agentTools(
  host: AgentToolHost,
  deps: { config: () => Record<string, unknown> },
): Array<Omit<ToolEntry, "owner">> {
  return [skillViewTool(host), delegateTool(deps)];
}
