import { sha256Hex } from "../core/hash.js";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { HermesError } from "../core/errors.js";
import { withFileLock } from "../core/file-lock.js";

const KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const QUOTA = 10 * 1024 * 1024;

/** `ctx.state`: a small JSON store per plugin, atomic, locked, 10 MiB cap. */
export class PluginState {
  readonly file: string;

  constructor(home: string, pluginKey: string) {
    const slug =
      pluginKey
        .toLowerCase()
        .replace(/[^a-z0-9_-]/g, "-")
        .replace(/^[-_]+|[-_]+$/g, "") || "plugin";
    const ns = `agent-plugin-${slug}-${sha256Hex(pluginKey).slice(0, 8)}`;
    this.file = join(home, "plugin-data", ns, "state.json");
  }

  private check(key: string): void {
    if (typeof key !== "string" || !KEY.test(key) || key.includes(".."))
      throw new HermesError("E_PLUGIN_STATE_INVALID", { message: `invalid state key '${String(key)}'` });
  }

  private async read(): Promise<Record<string, unknown>> {
    let text: string;
    try {
      text = await fsp.readFile(this.file, "utf8");
    } catch {
      return {};
    }
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== "object" || Array.isArray(v))
      throw new HermesError("E_PLUGIN_STATE_CORRUPT", {
        message: `${this.file} is corrupt (not a JSON object); not overwritten`,
        file: this.file,
      });
    return v as Record<string, unknown>;
  }

  async get(key: string, fallback: unknown = null): Promise<unknown> {
    this.check(key);
    return withFileLock(this.file, async () => {
      const all = await this.read();
      return Object.prototype.hasOwnProperty.call(all, key) ? all[key] : fallback;
    });
  }

  async set(key: string, value: unknown): Promise<void> {
    this.check(key);
    await withFileLock(this.file, async () => {
      const all = await this.read();
      all[key] = value;
      const text = JSON.stringify(all, null, 2);
      if (text === undefined)
        throw new HermesError("E_PLUGIN_STATE_INVALID", { message: `state value for '${key}' is not JSON` });
      if (Buffer.byteLength(text) > QUOTA)
        throw new HermesError("E_PLUGIN_STATE_QUOTA", { message: "plugin state quota exceeded (10 MiB)" });
      await writeFileAtomic(this.file, `${text}\n`, { mode: 0o600 });
    });
  }
}
