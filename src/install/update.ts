import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { compile, type CompileResult } from "../compile/compile.js";
import { loadConfig } from "../config/config-file.js";
import type { OwnershipGuard } from "../config/enable.js";
import { knownCapabilities } from "../contracts/capabilities.js";
import { runConsent, type Io } from "../consent/flow.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { candidateFromFolder } from "../discovery/scan.js";
import { pullCheckout, upstreamRevision } from "./checkout.js";
import { revParse, runGit } from "./git.js";
import { readMetadata } from "./metadata.js";
import { copyExamples, scanReviewDir } from "./install.js";
import { locateInstalled, type InstalledPlugin } from "./locate.js";
import { updateScanGate } from "./scan-gate.js";
import { commitStage, createStage, discardStage, recoverInterrupted } from "./stage.js";

export const AUTOSTASH_MESSAGE = "hermes-plugin-update-autostash";

export interface UpdateOptions {
  paths: HomePaths;
  name: string;
  io: Io;
  guard?: OwnershipGuard;
  env?: NodeJS.ProcessEnv;
}

export interface UpdateResult {
  name: string;
  key: string;
  dir: string;
  before?: string;
  revision?: string;
  upToDate: boolean;
  /** What happened to local edits: none, re-applied, or kept in the stash after a conflict. */
  localChanges: "none" | "reapplied" | "stashed";
  notes: string[];
  compile?: CompileResult;
}

interface PullOutcome {
  upToDate: boolean;
  revision?: string;
  output: string;
  localChanges: UpdateResult["localChanges"];
  notes: string[];
}

/**
 * Pull with local edits stashed, then re-applied (left in the stash on a conflict), in `dir`
 * (a staged copy of the plugin: the placed plugin is never touched until the result is complete and scanned).
 */
export async function pullWithAutostash(dir: string, placedDir: string, env?: NodeJS.ProcessEnv): Promise<PullOutcome> {
  const g = (args: string[], identity = false) => runGit(args, { cwd: dir, env, identity });
  const status = await g(["status", "--porcelain"]);
  const dirty = status.ok && status.stdout.trim() !== "";
  let stashed = false;
  if (dirty) {
    const before = (await revParse(dir, "refs/stash", env)) ?? "";
    const push = await g(["stash", "push", "--include-untracked", "-m", AUTOSTASH_MESSAGE], true);
    const after = (await revParse(dir, "refs/stash", env)) ?? "";
    if (!after || after === before) {
      throw new HermesError("E_UPDATE_STASH_FAILED", {
        message:
          "local changes in the plugin checkout could not be stashed; update aborted before touching the " +
          `checkout${push.error ? `:\n  ${push.error}` : ""}`,
      });
    }
    stashed = true;
    if (!push.ok) await g(["reset", "--hard", "--quiet", "HEAD"]);
  }
  const pull = await pullCheckout(dir, env);
  if (!pull.ok) {
    let note = "";
    if (stashed) {
      const applied = await g(["stash", "apply", "--quiet", "stash@{0}"], true);
      const conflicts = await g(["diff", "--name-only", "--diff-filter=U"]);
      if (applied.ok && conflicts.ok && !conflicts.stdout.trim()) {
        await g(["stash", "drop", "--quiet", "stash@{0}"]);
        note = "Local changes were restored (the plugin checkout was not changed).";
      } else note = "The plugin checkout was not changed; your local changes are still in it.";
    }
    if (pull.timedOut)
      throw new HermesError("E_GIT_TIMEOUT", { message: `git pull timed out${note ? `. ${note}` : ""}` });
    throw new HermesError("E_UPDATE_PULL_FAILED", {
      message:
        "git pull " +
        `failed:\n  ${(pull.error || "git pull failed.").split("\n").join("\n  ")}${note ? `\n${note}` : ""}`,
    });
  }
  const notes: string[] = [];
  let localChanges: PullOutcome["localChanges"] = "none";
  if (stashed) {
    const applied = await g(["stash", "apply", "--quiet", "stash@{0}"], true);
    const conflicts = await g(["diff", "--name-only", "--diff-filter=U"]);
    if (applied.ok && conflicts.ok && !conflicts.stdout.trim()) {
      await g(["stash", "drop", "--quiet", "stash@{0}"]);
      notes.push("Local changes were re-applied on top of the update.");
      localChanges = "reapplied";
    } else {
      await g(["reset", "--hard", "--quiet", "HEAD"]);
      await g(["clean", "-fd", "--quiet"]);
      notes.push(
        "⚠ Local changes in this plugin conflicted with the update and were NOT re-applied. They are " +
          `preserved in git stash — inspect with \`git stash show -p stash@{0}\` and re-apply with \`git stash ` +
          `pop\` inside ${placedDir}.`,
      );
      localChanges = "stashed";
    }
  }
  return { upToDate: pull.upToDate, revision: pull.revision, output: pull.output, localChanges, notes };
}

type InstallRecord = Awaited<ReturnType<typeof readMetadata>>[string];

/** Refuse what update cannot move: a pinned plugin, a linked checkout, a folder that is not a git clone. */
async function assertUpdatable(found: InstalledPlugin, rec: InstallRecord | undefined): Promise<void> {
  if (rec?.pinned) {
    throw new HermesError("E_UPDATE_PINNED", {
      message: `plugin '${found.rel}' is pinned to ${rec.revision}; update never moves a pin`,
      hint: `to move it, run \`hermes plugins install ${rec.source} --force --ref <40-character commit SHA>\``,
    });
  }
  const link = await fsp.lstat(found.dir).then(
    (st) => st.isSymbolicLink(),
    () => false,
  );
  if (link) {
    // Copying a linked checkout into place would silently turn a developer's link into a copy.
    throw new HermesError("E_UPDATE_NOT_GIT", {
      message:
        `plugin '${found.rel}' is a symlink to ${await fsp.readlink(found.dir)}; update the checkout it points ` +
        "to (git pull there), then run hermes compile",
    });
  }
  if (
    !(await fsp.lstat(join(found.dir, ".git")).then(
      () => true,
      () => false,
    ))
  ) {
    throw new HermesError("E_UPDATE_NOT_GIT", {
      message: `plugin '${found.rel}' was not installed from git (no .git directory); cannot update`,
    });
  }
}

/** Copy the placed plugin into the stage and pull there, naming the plugin folder in git's errors. */
async function pullStaged(staged: string, placed: string, env: NodeJS.ProcessEnv | undefined): Promise<PullOutcome> {
  await fsp.cp(placed, staged, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    errorOnExist: true,
    force: false,
  });
  return await pullWithAutostash(staged, placed, env).catch((e: unknown) => {
    // git names the staged copy; people know the plugin folder.
    if (e instanceof HermesError && e.message.includes(staged)) {
      throw new HermesError(e.code, {
        message: e.message.split(staged).join(placed),
        hint: e.hint,
        cause: e,
      });
    }
    throw e;
  });
}

/** Tell the user what the update did: the move and git's notes, or that nothing moved. */
function reportUpdate(
  io: Io,
  rel: string,
  moved: boolean,
  before: string | undefined,
  revision: string,
  pulled: PullOutcome,
): void {
  if (moved) {
    for (const n of pulled.notes) io.out(n);
    io.out(`✓ Plugin ${rel} updated${before ? ` (${before.slice(0, 12)} → ${revision.slice(0, 12)})` : ""}.`);
    if (pulled.output) for (const l of pulled.output.split("\n")) io.out(`  ${l}`);
  } else io.out(`✓ Plugin ${rel} is already up to date.`);
}

/** `hermes plugins update <name>`; the new revision is scanned before it replaces the placed one. */
export async function updatePlugin(o: UpdateOptions): Promise<UpdateResult> {
  const { paths, io } = o;
  for (const note of await recoverInterrupted(paths)) io.warn(`note: ${note}`);
  const found = await locateInstalled(paths, o.name);
  const meta = await readMetadata(paths.installMetadata);
  const rec = meta[found.rel];
  await assertUpdatable(found, rec);
  io.out(`Updating ${found.rel}...`);
  const before = (await upstreamRevision(found.dir, o.env)) ?? rec?.revision;
  const stage = await createStage(paths, "update", found.rel);
  try {
    const pulled = await pullStaged(stage.plugin, found.dir, o.env);
    const moved = !pulled.upToDate || (pulled.revision !== undefined && pulled.revision !== before);
    const cand = await candidateFromFolder(stage.plugin, "user", {
      dirName: found.rel.split("/").pop()!,
      category: found.category,
    });
    const key = cand?.key ?? found.key;
    const revision = pulled.revision ?? before ?? "";
    if (moved) {
      await updateScanGate(
        io,
        {
          dir: stage.plugin,
          displayDir: found.dir,
          pluginKey: key,
          revision,
          source: rec?.source ?? found.rel,
          configFile: paths.config,
          reviewDir: scanReviewDir(paths, key),
        },
        before,
      );
      await copyExamples(stage.plugin, io);
      await commitStage(paths, stage, rec ? { ...rec, revision } : undefined, { expectTarget: true });
    }
    const placed = await candidateFromFolder(found.dir, "user", {
      dirName: found.rel.split("/").pop()!,
      category: found.category,
    });
    const declared = knownCapabilities(placed?.manifest?.capabilities ?? []);
    const cfgNow = (await loadConfig(paths.config)).value;
    await runConsent({
      configFile: paths.config,
      config: cfgNow,
      key,
      declared,
      context: "update",
      io,
      guard: o.guard,
    });
    reportUpdate(io, found.rel, moved, before, revision, pulled);
    const compiled = await compile({ home: paths.home, env: o.env });
    if (compiled.applied) io.out(`lock updated: generation ${compiled.generation}`);
    return {
      name: found.rel,
      key,
      dir: found.dir,
      before,
      revision,
      upToDate: !moved,
      localChanges: pulled.localChanges,
      notes: pulled.notes,
      compile: compiled,
    };
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
}
