import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../config/config-file.js";
import { enablePlugin, type OwnershipGuard } from "../../config/enable.js";
import { migrateEnabledList } from "../../discovery/migrate.js";
import { knownCapabilities, type CapabilityId } from "../../contracts/capabilities.js";
import { runConsent, type Io } from "../../consent/flow.js";
import { HermesError } from "../../core/errors.js";
import type { HomePaths } from "../../core/paths.js";
import { candidateFromFolder } from "../../discovery/scan.js";
import { isPluginFolder } from "../../manifest/parse.js";
import { promptEnv } from "../../install/env-file.js";
import { runGit } from "../../install/git.js";
import { scrubUrl } from "../../install/identifier.js";
import { copyExamples, validatePluginName } from "../../install/install.js";
import { readMetadata, type InstallRecord } from "../../install/metadata.js";
import { installScanGate } from "../../install/scan-gate.js";
import { commitStage, createStage, discardStage, renameStageName } from "../../install/stage.js";
import { splitSource } from "../export.js";
import type { BundledPlugin } from "./bundle.js";
import { buildTree, writeLooseObjects } from "./git-objects.js";

/**
 * Placing one verified bundled plugin: the steps of `installPlugin` (src/install/install.ts)
 * after its clone, with the bundle's verified tree in place of the clone. Same staging and
 * crash-safe placement (stage.ts), same name rules, same scan gate (caution needs --force or a
 * yes; dangerous never passes), same `*.example` copies, same metadata record (pinned, the
 * bundled revision, the original source), enable, and per-plugin consent.
 *
 * The placed folder gets a `.git` equivalent to what a git install leaves: for a root plugin a
 * shallow checkout detached at the revision; for a subdirectory plugin the `hermes-subdir`
 * snapshot branch (same commit id a git install makes) with `hermes.subdir`/`hermes.upstream`,
 * plus the revision's commit and path trees, so a later `pack export --bundle` of this home
 * reads the same objects and writes the same bytes.
 *
 * TODO(issue 7 request): replace with an `installPlugin` entry point that takes a prepared tree.
 */

export interface PlaceOptions {
  paths: HomePaths;
  io: Io;
  force?: boolean;
  guard?: OwnershipGuard;
  env?: NodeJS.ProcessEnv;
}

export interface PlaceResult {
  name: string;
  key: string;
  dir: string;
  granted: CapabilityId[];
  pending: CapabilityId[];
}

const SNAPSHOT_ENV = { GIT_AUTHOR_DATE: "@0 +0000", GIT_COMMITTER_DATE: "@0 +0000" };

async function git(
  dir: string,
  args: string[],
  what: string,
  env?: NodeJS.ProcessEnv,
  opts: { identity?: boolean; extraEnv?: Record<string, string> } = {},
): Promise<string> {
  const r = await runGit(args, { cwd: dir, env, ...opts });
  if (!r.ok) throw new HermesError("E_GIT_FAILED", { message: `${what} failed in ${dir}: ${r.error}` });
  return r.stdout.trim();
}

/** Give a verified tree the `.git` a git install would have left (see the module comment). */
export async function initCheckout(dir: string, p: BundledPlugin, env?: NodeJS.ProcessEnv): Promise<void> {
  const { url, subdir } = splitSource(p.meta.source);
  await git(dir, ["init", "-q"], "git init", env);
  const gitDir = join(dir, ".git");
  const built = buildTree(p.files);
  const commit = Buffer.from(p.meta.proof.commit, "base64");
  await writeLooseObjects(gitDir, [
    ...[...built.blobs.values()].map((content) => ({ type: "blob" as const, content })),
    ...[...built.trees.values()].map((content) => ({ type: "tree" as const, content })),
    ...p.meta.proof.trees.map((t) => ({ type: "tree" as const, content: Buffer.from(t, "base64") })),
    { type: "commit" as const, content: commit },
  ]);
  await fsp.writeFile(join(gitDir, "shallow"), `${p.meta.revision}\n`);
  if (!subdir) {
    await fsp.writeFile(join(gitDir, "HEAD"), `${p.meta.revision}\n`);
  } else {
    const snap = await git(
      dir,
      ["commit-tree", p.meta.tree, "-m", `hermes-kit snapshot of ${p.meta.source} at ${p.meta.revision}`],
      "recording the subdirectory snapshot",
      env,
      {
        identity: true,
        extraEnv: SNAPSHOT_ENV,
      },
    );
    await git(dir, ["update-ref", "refs/heads/hermes-subdir", snap], "creating the snapshot branch", env);
    await git(dir, ["symbolic-ref", "HEAD", "refs/heads/hermes-subdir"], "switching to the snapshot branch", env);
    await git(dir, ["config", "hermes.subdir", subdir], "recording the subdirectory", env);
    await git(dir, ["config", "hermes.upstream", p.meta.revision], "recording the upstream revision", env);
  }
  await git(dir, ["reset", "--quiet", "--mixed", "HEAD"], "indexing the tree", env);
  await git(dir, ["remote", "add", "origin", scrubUrl(url)], "recording the origin", env);
}

/** Install one verified, materialized plugin tree (`tree` is consumed). */
export async function placeBundledPlugin(o: PlaceOptions, p: BundledPlugin, tree: string): Promise<PlaceResult> {
  const { paths, io } = o;
  await readMetadata(paths.installMetadata);
  const stage = await createStage(paths, "install", "");
  try {
    await fsp.rename(tree, stage.plugin).catch(async () => {
      await fsp.cp(tree, stage.plugin, { recursive: true, verbatimSymlinks: true });
      await fsp.rm(tree, { recursive: true, force: true });
    });
    await initCheckout(stage.plugin, p, o.env);
    const source = p.meta.source;
    const revision = p.meta.revision;
    const fallback = p.meta.subdir ? p.meta.subdir.split("/").pop()! : p.meta.folder;
    let cand = await candidateFromFolder(stage.plugin, "user", { dirName: fallback });
    if (!cand)
      throw new HermesError("E_INSTALL_NO_MANIFEST", {
        message: `${p.entry.display} has no plugin.yaml; nothing was installed`,
      });
    const errors = cand.diagnostics.filter((d) => d.severity === "error");
    if (errors.length || (!cand.manifest && cand.status !== "portable")) {
      throw new HermesError("E_INSTALL_MANIFEST_INVALID", {
        message:
          `the plugin ${p.entry.display} cannot load (${errors.length} problem(s) in its manifest or files); ` +
          "nothing was installed",
        diagnostics: errors,
      });
    }
    const name = cand.name;
    validatePluginName(name);
    await renameStageName(stage, name);
    const target = join(paths.plugins, name);
    for (const d of cand.diagnostics) if (d.severity === "warning") io.warn(`warning ${d.code}: ${d.message}`);
    const targetStat = await fsp.lstat(target).catch(() => undefined);
    if (targetStat) {
      if (!o.force)
        throw new HermesError("E_INSTALL_EXISTS", {
          message: `plugin '${name}' already exists at ${target}`,
          hint: "use --force to reinstall it from the bundle",
        });
      const prior = (await readMetadata(paths.installMetadata))[name];
      const isPlugin = await isPluginFolder(target);
      if (targetStat.isDirectory() && !prior && !isPlugin) {
        throw new HermesError("E_INSTALL_EXISTS", {
          message: `${target} exists and is not a plugin folder; --force will not replace it`,
        });
      }
    }
    const key = cand.key;
    const declared = knownCapabilities(cand.manifest?.capabilities ?? []);
    await installScanGate(
      io,
      { dir: stage.plugin, displayDir: target, pluginKey: key, revision, source, configFile: paths.config },
      { force: o.force },
    );
    await copyExamples(stage.plugin, io, targetStat ? target : undefined);
    await migrateEnabledList(paths.home, o.env);
    const record: InstallRecord = { pinned: true, revision, source };
    await commitStage(paths, stage, record);
    cand = await candidateFromFolder(target, "user", { dirName: name });
    if (cand?.manifest?.requires_env.length) await promptEnv(o, name, cand.manifest.requires_env);
    const res = await enablePlugin(paths.config, { key, name }, o.guard);
    io.out(res.message);
    const cfg = (await loadConfig(paths.config)).value;
    const consent = await runConsent({
      configFile: paths.config,
      config: cfg,
      key,
      declared,
      context: "install",
      io,
      guard: o.guard,
    });
    return { name, key, dir: target, granted: consent.granted, pending: consent.pending };
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
}
