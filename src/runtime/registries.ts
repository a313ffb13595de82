import { SlotMap } from "./ledger.js";

/** What a tool handler receives besides its arguments (the agent fills the ids). */
export type ToolExtra = Record<string, unknown>;

export type ToolHandler = (args: Record<string, unknown>, extra: ToolExtra) => unknown;

export interface ToolSchema {
  name?: string;
  description?: string;
  parameters?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface ToolEntry {
  name: string;
  toolset: string;
  schema: ToolSchema;
  handler: ToolHandler;
  check_fn?: () => boolean;
  requires_env: string[];
  description: string;
  emoji: string;
  /** Plugin key, or `builtin` for the agent's own tools. */
  owner: string;
}

/** Tools by name; a later registration takes the slot and unload restores what it displaced. */
export class ToolRegistry extends SlotMap<ToolEntry> {
  /** check_fn false, or a required env var unset, hides a tool from the model. */
  available(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
    const t = this.get(name);
    if (!t) return false;
    if (t.requires_env.some((v) => !env[v])) return false;
    if (t.check_fn) {
      try {
        return Boolean(t.check_fn());
      } catch {
        return false;
      }
    }
    return true;
  }

  list(env: NodeJS.ProcessEnv = process.env): ToolEntry[] {
    return this.values()
      .filter((t) => this.available(t.name, env))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Handlers return a string (usually JSON); anything else is serialised, errors become error JSON. */
  async dispatch(name: string, args: Record<string, unknown>, extra: ToolExtra = {}): Promise<string> {
    const t = this.get(name);
    if (!t) return JSON.stringify({ error: `unknown tool '${name}'` });
    try {
      const r = await t.handler(args, extra);
      return typeof r === "string" ? r : JSON.stringify(r ?? null);
    } catch (e) {
      return JSON.stringify({ error: `tool '${name}' failed: ${(e as Error)?.message ?? String(e)}` });
    }
  }
}

export interface CommandEntry {
  name: string;
  handler: (rawArgs: string) => unknown;
  description: string;
  args_hint: string;
  argument_mode: "options" | "text" | "mixed" | null;
  plugin: string;
  plugin_key: string;
}

export interface CliCommandEntry {
  name: string;
  help: string;
  description: string;
  setup_fn?: (cmd: unknown) => void;
  handler_fn?: (args: Record<string, unknown>) => unknown;
  plugin: string;
  plugin_key: string;
}

export interface SkillEntry {
  qualified: string;
  bare_name: string;
  path: string;
  description: string;
  plugin: string;
  plugin_key: string;
  frontmatter: Record<string, unknown>;
}

export interface ApprovalTransportEntry {
  name: string;
  present: (request: unknown) => unknown;
  plugin_id: string;
  profile_home: string;
}

export interface PromptSection {
  id: string;
  content: string | ((info: Readonly<Record<string, unknown>>) => unknown);
  position: "after_memory";
  max_chars: number;
  plugin_key: string;
}

/**
 * Provider kinds of the seeds. `single` kinds allow one registration at all (context engine);
 * `select` kinds keep every registration and the config picks the active one.
 */
export const PROVIDER_KINDS = {
  context_engine: { mode: "single", select: "context.engine" },
  memory: { mode: "select", select: "memory.provider" },
  model: { mode: "select", select: "model.provider" },
  image_gen: { mode: "select", select: "image_gen.provider" },
  video_gen: { mode: "select", select: "video_gen.provider" },
  tts: { mode: "select", select: "tts.provider" },
  transcription: { mode: "select", select: "stt.provider" },
  terminal_environment: { mode: "select", select: "terminal.backend" },
  platform: { mode: "select", select: "gateway.platforms" },
} as const satisfies Record<string, { mode: "single" | "select"; select: string }>;

export type ProviderKind = keyof typeof PROVIDER_KINDS;

/** Kinds whose names compare lowercased: registration lowercases them, and so does the original's selection. */
const LOWERCASE_KINDS: ReadonlySet<ProviderKind> = new Set<ProviderKind>([
  "terminal_environment",
  "tts",
  "transcription",
]);

/** The name the config's selection key of `kind` holds (`model.provider`, `memory.provider`, …), if any. */
export function selectedName(kind: ProviderKind, config: Record<string, unknown>): string | undefined {
  let cur: unknown = config;
  for (const seg of PROVIDER_KINDS[kind].select.split("."))
    cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[seg] : undefined;
  if (typeof cur !== "string" || !cur.trim()) return undefined;
  return LOWERCASE_KINDS.has(kind) ? cur.trim().toLowerCase() : cur.trim();
}

export interface ProviderEntry {
  kind: ProviderKind;
  name: string;
  provider: unknown;
  plugin_key: string;
}

/** One registry design for every provider kind; selection reads the config key the seeds name. */
export class ProviderRegistry {
  private readonly maps = new Map<ProviderKind, SlotMap<ProviderEntry>>();

  map(kind: ProviderKind): SlotMap<ProviderEntry> {
    let m = this.maps.get(kind);
    if (!m) {
      m = new SlotMap<ProviderEntry>();
      this.maps.set(kind, m);
    }
    return m;
  }

  list(kind: ProviderKind): ProviderEntry[] {
    return this.map(kind).values();
  }

  /** The active provider: the one the config names, or the only one for single kinds. */
  active(kind: ProviderKind, config: Record<string, unknown>): ProviderEntry | undefined {
    const all = this.list(kind);
    if (PROVIDER_KINDS[kind].mode === "single") return all[0];
    const name = selectedName(kind, config);
    return name ? all.find((p) => p.name === name) : undefined;
  }

  clear(): void {
    this.maps.clear();
  }
}
