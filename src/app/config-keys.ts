import { existsSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { parse as parseYaml } from "yaml";
import { HermesError, type Diagnostic } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { holdsSecret, redactText, redactValue } from "../core/redact.js";
import type { YamlEdit } from "../core/yaml-edit.js";
import { formatJsonPath } from "../core/yaml-source.js";
import { editConfig, loadConfig, parseConfigText, unreadableConfig, type LoadedConfig } from "../config/config-file.js";
import { describeKey, parseKeyPath, type KeyInfo } from "../config/key-path.js";
import { assertNotOwned, ownershipOf, readManaged } from "../config/managed.js";
import { readLock } from "../contracts/lock.js";
import type { CompileResult } from "../compile/compile.js";

/** What `hermes config set|unset` did. */
export interface ConfigKeyEdit {
  key: string;
  changed: boolean;
  /** The value written (secret-holding keys masked); absent for unset. */
  value?: unknown;
  /** The compile that keeps the lock in step with a compiled home; none for an uncompiled one. */
  compile?: CompileResult;
}

type Found = { found: true; value: unknown } | { found: false; blockedAt?: number };

/** The value at `path` in a parsed config; `blockedAt` is the index of a part below a value that is not a mapping. */
function lookup(root: unknown, path: string[]): Found {
  let cur = root;
  for (let i = 0; i < path.length; i++) {
    if (cur === null || cur === undefined) return { found: false };
    if (typeof cur !== "object" || Array.isArray(cur)) return { found: false, blockedAt: i };
    if (!Object.hasOwn(cur, path[i]!)) return { found: false };
    cur = (cur as Record<string, unknown>)[path[i]!];
  }
  return { found: true, value: cur };
}

function unknownKey(path: string[], info: Extract<KeyInfo, { kind: "unknown" }>): HermesError {
  return new HermesError("E_CONFIG_KEY_UNKNOWN", {
    message:
      `unknown config key '${formatJsonPath(path)}': '${path[info.at]}' is ${info.reason}` +
      (info.suggestion ? `; did you mean '${info.suggestion}'?` : ""),
  });
}

async function readable(paths: HomePaths): Promise<LoadedConfig> {
  const cfg = await loadConfig(paths.config);
  const bad = unreadableConfig(cfg);
  if (bad) throw new HermesError(bad.code, { message: bad.message, file: bad.file, line: bad.line, col: bad.col });
  return cfg;
}

/** A value as `get` shows it: the values of secret-holding keys and secret-shaped strings masked. */
function shown(path: string[], value: unknown): unknown {
  const last = path[path.length - 1]!;
  return (redactValue({ [last]: value }) as Record<string, unknown>)[last];
}

/** `hermes config get <key>`: the value in config.yaml; a key that is not set is refused (exit 1). */
export async function getConfigKey(paths: HomePaths, key: string): Promise<unknown> {
  const path = parseKeyPath(key);
  const cfg = await readable(paths);
  const found = lookup(cfg.value, path);
  if (found.found) return shown(path, found.value);
  const info = describeKey(path);
  if (info.kind === "unknown") throw unknownKey(path, info);
  const fallback = info.kind === "described" && info.node.default !== undefined;
  throw new HermesError("E_CONFIG_KEY_NOT_SET", {
    message:
      `${formatJsonPath(path)} is not set in ${paths.config}` +
      (fallback && info.kind === "described" ? ` (default: ${JSON.stringify(info.node.default)})` : ""),
  });
}

/** A value as typed: YAML (so JSON too) unless `asString`. */
export function parseValue(raw: string, asString = false): unknown {
  if (asString) return raw;
  try {
    return parseYaml(raw) as unknown;
  } catch (e) {
    throw new HermesError("E_CONFIG_VALUE_INVALID", {
      message: `'${raw}' is not a YAML value (${(e as Error).message.split("\n")[0]}); nothing was written`,
      hint: "quote it for YAML, or pass --string to write it as a string",
    });
  }
}

/** A literal secret, at `path` or at any secret-holding key inside `value`: refused, `${VAR}` references pass. */
function assertNoSecret(path: string[], value: unknown): void {
  const walk = (p: string[], v: unknown, secretKey: boolean): void => {
    if (typeof v === "string") {
      const literal = secretKey && v !== "" && !/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(v);
      if (literal || redactText(v, { pairs: false }) !== v) {
        throw new HermesError("E_CONFIG_SECRET_VALUE", {
          message: `${formatJsonPath(p)} would hold a secret in config.yaml; nothing was written`,
        });
      }
    } else if (typeof v === "number" && secretKey) walk(p, String(v), true);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk([...p, k], x, !Array.isArray(v) && holdsSecret(k));
    }
  };
  walk(path, value, holdsSecret(path[path.length - 1]!));
}

/** Refuse a change the deployment of a managed home owns: the key, a key below it, or a list item it contributed. */
async function assertWritable(paths: HomePaths, path: string[], next: unknown): Promise<void> {
  const marker = await readManaged(paths);
  if (!marker) return;
  const owned = ownershipOf((await readLock(paths.lock).catch(() => undefined))?.deployment);
  assertNotOwned(marker.kind, owned, path);
  for (const leaf of owned.leaves) {
    if (leaf.length > path.length && path.every((s, i) => leaf[i] === s)) assertNotOwned(marker.kind, owned, leaf);
  }
  for (const [listKey, items] of Object.entries(owned.items)) {
    const listPath = JSON.parse(listKey) as string[];
    if (listPath.length < path.length || !path.every((s, i) => listPath[i] === s)) continue;
    const list = lookup(next, listPath.slice(path.length));
    const kept = list.found && Array.isArray(list.value) ? list.value : [];
    for (const item of items) {
      const name = JSON.parse(item) as string;
      if (!kept.includes(name)) assertNotOwned(marker.kind, owned, listPath, name);
    }
  }
}

const problemKey = (d: Diagnostic) => `${d.code}|${d.path}|${d.message}`;

/** The schema problems an edit adds (errors, and unknown fields of closed sections): refused before the write. */
function schemaCheck(path: string[]) {
  return async (before: LoadedConfig, nextText: string): Promise<void> => {
    const had = new Set(before.diagnostics.map(problemKey));
    const after = parseConfigText(nextText, before.file).diagnostics;
    const fresh = after.filter(
      (d) => !had.has(problemKey(d)) && (d.severity === "error" || d.code === "W_SCHEMA_UNKNOWN_FIELD"),
    );
    if (!fresh.length) return;
    throw new HermesError("E_CONFIG_VALUE_INVALID", {
      message:
        `refusing to change ${formatJsonPath(path)}: ` +
        `${fresh.map((d) => `${d.path ?? ""}: ${d.message}`).join("; ")}; nothing was written`,
    });
  };
}

/** One locked edit of config.yaml: schema first, then the compile check plugins enable uses; then the lock follows. */
async function writeEdit(
  paths: HomePaths,
  path: string[],
  plan: (cur: LoadedConfig) => Promise<YamlEdit[]>,
): Promise<{ changed: boolean; compile?: CompileResult }> {
  // Loaded here: `config get` never compiles.
  const { compile, editCompileCheck } = await import("../compile/compile.js");
  const schema = schemaCheck(path);
  const compiles = editCompileCheck(paths.home);
  const res = await editConfig(paths.config, plan, async (before, text) => {
    await schema(before, text);
    await compiles(before, text);
  });
  // A compiled home keeps its lock in step, as `plugins enable` does; an uncompiled one compiles at its next start.
  if (!res.changed || !existsSync(paths.lock)) return { changed: res.changed };
  return { changed: true, compile: await compile({ home: paths.home }) };
}

/** `hermes config set <key> <value>`: validated, secret-free, not owned by a deployment; comments kept. */
export async function setConfigKey(paths: HomePaths, key: string, value: unknown): Promise<ConfigKeyEdit> {
  const path = parseKeyPath(key);
  const info = describeKey(path);
  if (info.kind === "unknown") throw unknownKey(path, info);
  assertNoSecret(path, value);
  await assertWritable(paths, path, value);
  const res = await writeEdit(paths, path, async (cur) => {
    const found = lookup(cur.value, path);
    if (found.found && isDeepStrictEqual(found.value, value)) return [];
    if (!found.found && found.blockedAt !== undefined) {
      const parent = path.slice(0, found.blockedAt);
      throw new HermesError("E_CONFIG_VALUE_INVALID", {
        message:
          `${formatJsonPath(parent)} holds a value that is not a mapping, so ${formatJsonPath(path)} cannot be set ` +
          `below it; set ${formatJsonPath(parent)} itself, or unset it first; nothing was written`,
      });
    }
    return [{ op: "set", path, value }];
  });
  return { key: formatJsonPath(path), value: shown(path, value), ...res };
}

/** The key to delete: the key itself, or its highest ancestor that would be left an empty mapping. */
function pruneTarget(root: unknown, path: string[]): string[] {
  let target = path;
  while (target.length > 1) {
    const parent = lookup(root, target.slice(0, -1));
    if (!parent.found || Object.keys(parent.value as object).length !== 1) break;
    target = target.slice(0, -1);
  }
  return target;
}

/** `hermes config unset <key>`: removes the key (and mappings it leaves empty); a key not set changes nothing. */
export async function unsetConfigKey(paths: HomePaths, key: string): Promise<ConfigKeyEdit> {
  const path = parseKeyPath(key);
  const cfg = await readable(paths);
  if (!lookup(cfg.value, path).found) {
    const info = describeKey(path);
    if (info.kind === "unknown") throw unknownKey(path, info);
    return { key: formatJsonPath(path), changed: false };
  }
  await assertWritable(paths, path, undefined);
  const res = await writeEdit(paths, path, async (cur) =>
    lookup(cur.value, path).found ? [{ op: "delete", path: pruneTarget(cur.value, path) }] : [],
  );
  return { key: formatJsonPath(path), ...res };
}
