/**
 * Homes for the enable/disable tests: three user plugins (flat `flat`, category `image_gen/openai`
 * named openai-image, `video/sora` named sora-video) beside the bundled hello-world, and readers
 * for what an edit left behind.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll } from "vitest";
import { runCli, type RunOptions } from "../support/cli.js";
import { bundledWithHelloWorld, Scratch, writePlugin, writeText } from "../support/home.js";

/** A current config (v21: no migration rewrites it) with an empty allow-list. */
export const INITIAL = "plugins:\n  enabled: []\n_config_version: 21\n";

/** Registers the scratch folder with this test file's beforeAll/afterAll. */
export function toggleHomes() {
  const state: { s?: Scratch; bundled: string } = { bundled: "" };
  beforeAll(() => {
    state.s = new Scratch();
    state.bundled = bundledWithHelloWorld(state.s);
  });
  afterAll(() => state.s?.cleanup());

  const scratch = (): Scratch => state.s!;
  const makeHome = (name: string, config: string | null = INITIAL): string => {
    const h = scratch().dir(name);
    writePlugin(join(h, "plugins", "flat"), "name: flat\nversion: 1.0.0\n");
    writePlugin(join(h, "plugins", "image_gen", "openai"), "name: openai-image\nversion: 2.0.0\n");
    writePlugin(join(h, "plugins", "video", "sora"), "name: sora-video\n");
    if (config !== null) writeText(join(h, "config.yaml"), config);
    return h;
  };
  const run = (args: string[], home: string, extra: RunOptions = {}) =>
    runCli(args, { home, ...extra, env: { HERMES_BUNDLED_PLUGINS: state.bundled, ...extra.env } });
  const readConfig = (h: string) => readFileSync(join(h, "config.yaml"), "utf8");
  const lists = (h: string) => {
    const p =
      (parse(readConfig(h)) as { plugins?: { enabled?: string[] | null; disabled?: string[] | null } }).plugins ?? {};
    return { enabled: p.enabled ?? [], disabled: p.disabled ?? [] };
  };
  /** Stray files an edit must never leave behind: `<file>.lock` and atomic-write temp files. */
  const leftovers = (h: string) => readdirSync(h).filter((f) => f.endsWith(".lock") || f.endsWith(".tmp"));
  return { scratch, bundled: () => state.bundled, makeHome, run, readConfig, lists, leftovers };
}
