import { register } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PACKAGE_ROOT } from "../core/paths.js";

/** Runtimes created in this process so far: each imports its own instances of plugin modules. */
let runtimes = 0;
let fileHooks = false;

/** The built hooks module (Node runs hooks as JavaScript, also when this file runs from source in tests). */
function hooksUrl(): URL {
  const here = new URL("./plugin-url-hooks.js", import.meta.url);
  return import.meta.url.endsWith(".ts")
    ? pathToFileURL(join(PACKAGE_ROOT, "dist", "runtime", "plugin-url-hooks.js"))
    : here;
}

/** A new runtime's number; from the second one on, plugin files imported by plugins are fresh too. */
export function nextRuntimeInstance(): number {
  runtimes++;
  if (runtimes > 1 && !fileHooks) {
    fileHooks = true;
    // hermes serve loads a new generation beside the old one: a plugin's own helper files must be
    // re-evaluated with it, not taken from the module cache of the old generation.
    register(hooksUrl(), { data: { kitRoot: PACKAGE_ROOT } });
  }
  return runtimes;
}

/**
 * The URL a plugin's entry is imported from. The query makes the module distinct per content
 * (integrity), per runtime instance and per in-place reload, so no two generations share module state.
 */
export function pluginEntryUrl(
  target: string,
  entry: string | null | undefined,
  integrity: string,
  instance: number,
  reload: number,
): string {
  return `${pathToFileURL(join(target, entry ?? "index.js")).href}?v=${integrity.slice(-12)}.${instance}.${reload}`;
}
