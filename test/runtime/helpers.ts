import { createHash } from "node:crypto";
/**
 * Fixtures for the runtime unit tests: real plugin folders in a temporary home, a hand-made lock
 * (the runtime trusts only the lock; startup verification is tested end to end), and a logger whose
 * records the test can read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino, type Logger } from "pino";
import type { Lock, LockPlugin, LockSettings } from "../../src/contracts/lock.js";
import { consentHash } from "../../src/contracts/capabilities.js";
import { HOOK_CATALOG_VERSION, HOOK_NAMES, MIDDLEWARE_KINDS } from "../../src/contracts/hook-catalog.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { tempDir } from "../support/home.js";

export interface LogRecord {
  level: number;
  msg: string;
  plugin?: string;
  [k: string]: unknown;
}

export interface CapturedLog {
  log: Logger;
  records: LogRecord[];
  /** Records at warn level or above. */
  warnings(): LogRecord[];
  /** Records at debug level (exactly). */
  debugs(): LogRecord[];
}

export function captureLog(): CapturedLog {
  const records: LogRecord[] = [];
  const log = pino(
    { level: "debug", base: undefined },
    { write: (s: string) => void records.push(JSON.parse(s) as LogRecord) },
  );
  return {
    log,
    records,
    warnings: () => records.filter((r) => r.level >= 40),
    debugs: () => records.filter((r) => r.level === 20),
  };
}

export interface TestPlugin {
  key: string;
  /** The ES module source of index.js. */
  code: string;
  /** Extra plugin.yaml lines (name and version are written for you). */
  manifest?: string;
  source?: "user" | "bundled";
  /** Capabilities declared in plugin.yaml. */
  declared?: string[];
  /** Capabilities the lock records as granted (consent bound to the declared set). */
  granted?: string[];
  required?: boolean;
  /** Do not write index.js (e.g. to use `main:`). */
  noEntry?: boolean;
  entry?: string;
}

let seq = 0;

/** Write the plugin folders and build a lock that loads them in the given order. */
export function makeLock(home: string, plugins: TestPlugin[], settings: Partial<LockSettings> = {}): Lock {
  const entries: LockPlugin[] = plugins.map((p, i) => {
    const dir = join(home, "plugins", p.key.replace(/\//g, "__"));
    mkdirSync(dir, { recursive: true });
    const declared = p.declared ?? p.granted ?? [];
    const caps = declared.length ? `capabilities: [${declared.join(", ")}]\n` : "";
    const manifestText = `name: ${p.key.split("/").pop()}\nversion: "1"\n${caps}${p.manifest ?? ""}`;
    writeFileSync(join(dir, "plugin.yaml"), manifestText);
    if (!p.noEntry) writeFileSync(join(dir, p.entry ?? "index.js"), p.code);
    seq++;
    return {
      key: p.key,
      name: p.key.split("/").pop()!,
      version: "1",
      kind: "standalone",
      source: p.source ?? "user",
      origin: p.source === "bundled" ? "bundled" : "local",
      path: dir,
      target: dir,
      entry: p.entry ?? "index.js",
      // Unique per test plugin: the runtime's import URL carries it, so ESM caching never mixes tests.
      integrity: `sha256-tree:${String(seq).padStart(12, "0")}${String(Date.now()).slice(-12)}`,
      // As compile records it: startup trusts the lock's view of a manifest whose bytes match.
      manifest_sha256: createHash("sha256").update(manifestText, "utf8").digest("hex"),
      state: "enabled",
      action: "load",
      reason: "enabled in config",
      load_position: i + 1,
      required: p.required ?? false,
      capabilities: {
        declared,
        granted: p.granted ?? [],
        consent_hash: consentHash(declared),
        // Declarative, as a deploy spec records it: the runtime re-derives grants from the deployment.
        consent: p.granted?.length ? "declarative" : null,
        not_carried: [],
      },
      hooks: [],
      middleware: [],
      git: null,
      managed: false,
    };
  });
  const keys = plugins.map((p) => p.key);
  return {
    schema: "hermes.lock.v1",
    inputs_hash: `sha256:${"0".repeat(64)}`,
    hook_catalog: HOOK_CATALOG_VERSION,
    settings: {
      hook_callback_timeout: 30,
      load_timeout_seconds: 10,
      approval_transport: null,
      approval_transport_fallback: "deny",
      memory_provider: null,
      context_engine: null,
      ...settings,
    },
    load_order: keys,
    // Every plugin gets a slot everywhere, so order checks stay quiet unless a test wants otherwise.
    chains: {
      hooks: Object.fromEntries(HOOK_NAMES.map((h) => [h, keys])),
      middleware: Object.fromEntries(MIDDLEWARE_KINDS.map((k) => [k, keys])),
    },
    deployment: {
      kind: null,
      spec: null,
      list_policy: "union",
      owned_leaves: [],
      owned_items: {},
      links: [],
      plugins: Object.fromEntries(
        plugins
          .filter((p) => p.granted?.length)
          .map((p) => [p.key, { grants: p.granted!, required: p.required ?? false }]),
      ),
    },
    plugins: entries,
  };
}

export interface Started {
  rt: Runtime;
  home: string;
  logs: CapturedLog;
}

/** A runtime over a fresh home with these plugins, loaded. */
export async function start(
  plugins: TestPlugin[],
  opts: { settings?: Partial<LockSettings>; config?: string; strict?: boolean; load?: boolean } = {},
): Promise<Started> {
  const home = tempDir("hk-rt-");
  if (opts.config !== undefined) writeFileSync(join(home, "config.yaml"), opts.config);
  const logs = captureLog();
  const rt = new Runtime(home, makeLock(home, plugins, opts.settings), { log: logs.log, strict: opts.strict });
  if (opts.load !== false) await rt.loadAll();
  return { rt, home, logs };
}

/** A plugin whose register body is `body` (ctx in scope). */
export function plugin(key: string, body: string, extra: Omit<TestPlugin, "key" | "code"> = {}): TestPlugin {
  return { key, code: `export async function register(ctx) {\n${body}\n}\n`, ...extra };
}
