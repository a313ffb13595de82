import { spawnSync } from "node:child_process";
import { accessSync, constants, promises as fsp } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";

/*
 * `hermes open-url --register|--unregister`: a freedesktop desktop entry that makes this CLI the
 * handler of hermes:// and hermes-dev:// links (what a browser or file manager opens them with).
 */

export const DESKTOP_FILE = "hermes-open-url.desktop";
export const SCHEME_MIME_TYPES = ["x-scheme-handler/hermes", "x-scheme-handler/hermes-dev"] as const;

export interface UrlHandlerResult {
  desktopFile: string;
  /** Whether `xdg-mime` was found and run (registration) or the defaults list was edited (removal). */
  defaultsUpdated: boolean;
  changed: boolean;
}

function xdgDir(env: NodeJS.ProcessEnv, key: "XDG_DATA_HOME" | "XDG_CONFIG_HOME", fallback: string): string {
  const v = env[key];
  // The spec says a relative value is invalid and must be ignored.
  return v && isAbsolute(v) ? v : join(env.HOME || homedir(), fallback);
}

function desktopFileOf(env: NodeJS.ProcessEnv): string {
  return join(xdgDir(env, "XDG_DATA_HOME", ".local/share"), "applications", DESKTOP_FILE);
}

/** One Exec argument, quoted as the Desktop Entry spec requires (`%` doubled so it is not a field code). */
function execArg(a: string): string {
  const s = a.replace(/%/g, "%%");
  if (!/[\s"'\\`$<>|&;*?#()~]/.test(s)) return s;
  return `"${s.replace(/(["`$\\])/g, "\\$1")}"`;
}

export function desktopEntry(node: string, cli: string): string {
  return [
    "[Desktop Entry]",
    "Type=Application",
    "Name=Hermes link handler",
    "Comment=Opens hermes:// install links with hermes open-url",
    `Exec=${execArg(node)} ${execArg(cli)} open-url %u`,
    // The flow asks for confirmation: the handler must run in a terminal.
    "Terminal=true",
    "NoDisplay=true",
    `MimeType=${SCHEME_MIME_TYPES.join(";")};`,
    "",
  ].join("\n");
}

function onPath(cmd: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? "").split(delimiter).some((d) => {
    try {
      accessSync(join(d, cmd), constants.X_OK);
      return d !== "";
    } catch {
      return false;
    }
  });
}

export async function registerUrlHandler(
  cliPath: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<UrlHandlerResult> {
  const file = desktopFileOf(env);
  const text = desktopEntry(process.execPath, resolve(cliPath));
  const before = await fsp.readFile(file, "utf8").catch(() => undefined);
  await fsp.mkdir(join(file, ".."), { recursive: true });
  if (before !== text) await writeFileAtomic(file, text);
  let defaultsUpdated = false;
  if (onPath("xdg-mime", env)) {
    defaultsUpdated = SCHEME_MIME_TYPES.every(
      (t) => spawnSync("xdg-mime", ["default", DESKTOP_FILE, t], { env, stdio: "ignore" }).status === 0,
    );
  }
  return { desktopFile: file, defaultsUpdated, changed: before !== text };
}

/** Drop our lines from mimeapps.list (`xdg-mime` has no "unset"): `x-scheme-handler/hermes=hermes-open-url.desktop`. */
async function dropDefaults(env: NodeJS.ProcessEnv): Promise<boolean> {
  const list = join(xdgDir(env, "XDG_CONFIG_HOME", ".config"), "mimeapps.list");
  const text = await fsp.readFile(list, "utf8").catch(() => undefined);
  if (text === undefined) return false;
  const ours = (line: string) =>
    SCHEME_MIME_TYPES.some((t) => line.trim() === `${t}=${DESKTOP_FILE}` || line.trim() === `${t}=${DESKTOP_FILE};`);
  const kept = text.split("\n").filter((l) => !ours(l));
  if (kept.length === text.split("\n").length) return false;
  await writeFileAtomic(list, kept.join("\n"));
  return true;
}

export async function unregisterUrlHandler(env: NodeJS.ProcessEnv = process.env): Promise<UrlHandlerResult> {
  const file = desktopFileOf(env);
  const had = await fsp.lstat(file).then(
    () => true,
    () => false,
  );
  if (had) await fsp.rm(file, { force: true });
  const defaultsUpdated = await dropDefaults(env);
  return { desktopFile: file, defaultsUpdated, changed: had || defaultsUpdated };
}
