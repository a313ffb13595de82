import { promises as fsp } from "node:fs";
import { basename, dirname, join } from "node:path";
import { loadConfig } from "../config/config-file.js";
import { HermesError } from "../core/errors.js";
import type { Io } from "../consent/flow.js";
import {
  blockHint,
  installDecision,
  renderText,
  scanPluginDir,
  scanSettingsOf,
  updateDecision,
  type Decision,
  type ScanReport,
} from "./scan/index.js";

/**
 * The install/update policy around the scanner:
 * `dangerous` is never overridden; `caution` needs `--force` or a yes on a terminal at install,
 * and only warns at update; `plugins.scan_on_install: false` skips the scan. Waivers come from
 * the operator's config (`plugins.scan_waivers`), never from the plugin.
 */

export interface ScanSubject {
  /** The staged tree. */
  dir: string;
  /** Shown instead of the staging path in locations (the folder name it will have). */
  displayDir: string;
  pluginKey: string;
  revision: string;
  source: string;
  configFile: string;
  /** Where a blocked tree is copied for review, so that the error's path names a file that exists. */
  reviewDir?: string;
}

async function scan(s: ScanSubject): Promise<ScanReport | undefined> {
  const settings = scanSettingsOf(await loadConfig(s.configFile));
  if (!settings.enabled) return undefined;
  const r = await scanPluginDir(s.dir, {
    pluginKey: s.pluginKey,
    revision: s.revision,
    source: s.source,
    waivers: settings.waivers,
    waiverSource: settings.file,
  });
  // The staged folder has a temporary name and path: report the plugin as it will be named.
  const summary = r.summary.startsWith(`${r.name}:`) ? `${s.pluginKey}${r.summary.slice(r.name.length)}` : r.summary;
  return { ...r, name: s.pluginKey, dir: s.displayDir, summary };
}

function printText(io: Io, report: ScanReport, decision: Decision): void {
  for (const line of renderText(report, { decision }).replace(/\n+$/, "").split("\n")) io.out(line);
}

/** A copy of the blocked tree (without .git) at `reviewDir`; undefined when there is none or it fails. */
async function keepForReview(s: ScanSubject): Promise<string | undefined> {
  if (!s.reviewDir) return undefined;
  try {
    await fsp.rm(s.reviewDir, { recursive: true, force: true });
    await fsp.mkdir(dirname(s.reviewDir), { recursive: true });
    await fsp.cp(s.dir, s.reviewDir, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => basename(src) !== ".git" || dirname(src) !== s.dir,
    });
    return s.reviewDir;
  } catch {
    return undefined;
  }
}

async function blocked(
  report: ScanReport,
  decision: Decision,
  s: ScanSubject,
  code: "E_INSTALL_SCAN_BLOCKED" | "E_INSTALL_SCAN_CAUTION" | "E_UPDATE_SCAN_BLOCKED",
  message: string,
): Promise<HermesError> {
  const top = report.deciding[0];
  // Nothing was placed: the paths of the findings name the review copy, which exists.
  const review = await keepForReview(s);
  return new HermesError(code, {
    message: `${message} (${decision.reason})${review ? `\nThe scanned files are kept for review in ${review}` : ""}`,
    hint: blockHint(report),
    file: top && top.file !== "." && review ? join(review, top.file) : undefined,
    line: top?.line || undefined,
    col: top?.col || undefined,
  });
}

/** Scan a staged install; throws E_SCAN_BLOCKED / E_SCAN_NEEDS_CONFIRMATION when the policy says so. */
export async function installScanGate(
  io: Io,
  s: ScanSubject,
  opts: { force?: boolean },
): Promise<ScanReport | undefined> {
  const report = await scan(s);
  if (!report) {
    io.warn("Security scan skipped (plugins.scan_on_install is false).");
    return undefined;
  }
  const decision = installDecision(report, { force: opts.force, interactive: io.interactive });
  if (decision.action === "allow") {
    if (report.verdict === "safe") io.out(`Security scan: ${report.summary}`);
    else {
      printText(io, report, decision);
      io.warn(`warning: ${decision.reason}`);
    }
    return report;
  }
  if (decision.action === "confirm") {
    printText(io, report, decision);
    if (await io.confirm("  Install anyway? [y/N] ")) return report;
    throw await blocked(
      report,
      decision,
      s,
      "E_INSTALL_SCAN_CAUTION",
      `the scan verdict for ${s.pluginKey} is 'caution' and was declined; nothing was installed`,
    );
  }
  printText(io, report, decision);
  if (report.verdict === "dangerous")
    throw await blocked(
      report,
      decision,
      s,
      "E_INSTALL_SCAN_BLOCKED",
      `the security scan blocked ${s.pluginKey}; nothing was installed`,
    );
  throw await blocked(
    report,
    decision,
    s,
    "E_INSTALL_SCAN_CAUTION",
    `the scan verdict for ${s.pluginKey} is 'caution' and nobody accepted it; nothing was installed`,
  );
}

/**
 * Rescan an updated tree before it replaces the installed one. Dangerous blocks the update (the
 * previous revision stays in place, enabled and consented); caution warns.
 */
export async function updateScanGate(
  io: Io,
  s: ScanSubject,
  previous: string | undefined,
): Promise<ScanReport | undefined> {
  const report = await scan(s);
  if (!report || report.verdict === "safe") return report;
  const decision = updateDecision(report);
  io.out(`⚠ Security scan flagged the updated plugin: ${report.summary}`);
  printText(io, report, decision);
  if (decision.action === "block") {
    throw await blocked(
      report,
      decision,
      s,
      "E_UPDATE_SCAN_BLOCKED",
      `the update of ${s.pluginKey} to ${s.revision} was blocked by the security scan; the previous ` +
        `revision ${previous ?? "(unknown)"} stays in place, enabled and consented as before`,
    );
  }
  return report;
}
