/**
 * The install-time security scanner, as the rest of hermes-kit uses it.
 *
 *   if (scanEnabled(config)) {                       // config: the parsed config.yaml (or a LoadedConfig)
 *     const report = await scanPluginDir(staged, { pluginKey, revision, source: identifier, config });
 *     const decision = installDecision(report, { force, interactive: isTTY });
 *     if (decision.action === "confirm") … ask "Install anyway? [y/N]", then block or go on …
 *     if (decision.action === "block") throw scanBlockedError(report, decision, renderText(report, { decision }));
 *   }
 *
 * `hermes plugins scan <dir>` (src/cli/commands/scan.ts) is the same scan for CI, with text, json
 * and SARIF output. Waivers come from the operator's config only (plugins.scan_waivers).
 */
export { scanPluginDir, type ScanOptions } from "./scan.js";
export { DEFAULT_LIMITS, type ScanLimits } from "./walk.js";
export {
  blockHint,
  installDecision,
  scanBlockedError,
  updateDecision,
  verdictOf,
  type Decision,
  type DecisionAction,
  type InstallPolicyOptions,
} from "./verdict.js";
export { applyWaivers, parseScanWaivers, waiverMatches, waiverSnippet, REVISION_RE } from "./waivers.js";
export { loadScanSettings, scanEnabled, scanSettingsOf, type ScanSettings } from "./settings.js";
export { formatScanReport, renderJson, renderText, verdictLine, type TextReportOptions } from "./report-text.js";
export { renderSarif, renderSarifObject, SARIF_LEVEL, TOOL_NAME } from "./report-sarif.js";
export { SCAN_PATTERNS, patternById, isPatternId, type PatternId, type PatternSpec } from "./patterns.js";
export * from "./types.js";
