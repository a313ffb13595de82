/**
 * SARIF 2.1.0 output for CI (GitHub code scanning and friends).
 *
 * - one run; tool.driver "hermes-kit plugin-guard" with every catalog row as a rule (id, short
 *   description, default level, category and severity as properties, a numeric
 *   `security-severity` that code scanning ranks by);
 * - one result per finding: level error (critical), warning (high), note (medium, low); a
 *   physicalLocation relative to the %PLUGINROOT% base with region startLine/startColumn and a
 *   snippet (whole-file findings have no region);
 * - a waived finding carries an external, accepted suppression with the operator's reason;
 * - the verdict and the deciding findings are recorded in run and result properties.
 */
import { pathToFileURL } from "node:url";
import { SCAN_PATTERNS } from "./patterns.js";
import { CATEGORIES, SCANNER_VERSION, type Finding, type ScanReport, type Severity } from "./types.js";

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
export const TOOL_NAME = "hermes-kit plugin-guard";

type Level = "error" | "warning" | "note";

export const SARIF_LEVEL: Readonly<Record<Severity, Level>> = {
  critical: "error",
  high: "warning",
  medium: "note",
  low: "note",
};
const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = {
  critical: "9.5",
  high: "7.5",
  medium: "5.0",
  low: "2.0",
};

export function sarifRules() {
  return SCAN_PATTERNS.map((p) => ({
    id: p.id,
    name: p.id
      .split("_")
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(""),
    shortDescription: { text: p.description },
    fullDescription: { text: `${p.description} (${CATEGORIES[p.category]}; ${p.severity})` },
    defaultConfiguration: { level: SARIF_LEVEL[p.severity] },
    properties: {
      category: p.category,
      severity: p.severity,
      "security-severity": SECURITY_SEVERITY[p.severity],
      tags: ["security", p.category],
    },
  }));
}

function result(f: Finding, ruleIndex: Map<string, number>, deciding: ReadonlySet<Finding>) {
  const physicalLocation: Record<string, unknown> = {
    artifactLocation: { uri: f.file === "." ? "./" : encodeURI(f.file), uriBaseId: "PLUGINROOT" },
  };
  if (f.line > 0) {
    physicalLocation.region = {
      startLine: f.line,
      startColumn: Math.max(1, f.col),
      snippet: { text: f.snippet ?? f.match },
    };
  }
  const r: Record<string, unknown> = {
    ruleId: f.id,
    ruleIndex: ruleIndex.get(f.id) ?? -1,
    level: SARIF_LEVEL[f.severity],
    message: { text: `${f.description}: "${f.match}"` },
    locations: [{ physicalLocation }],
    properties: {
      severity: f.severity,
      category: f.category,
      deciding: deciding.has(f),
      ...(f.adjusted ? { adjustedFrom: f.adjusted.from, adjustedWhy: f.adjusted.why } : {}),
    },
  };
  if (f.waived) r.suppressions = [{ kind: "external", status: "accepted", justification: f.waived.reason }];
  return r;
}

export function renderSarifObject(r: ScanReport): Record<string, unknown> {
  const rules = sarifRules();
  const ruleIndex = new Map(rules.map((x, i) => [x.id, i]));
  const deciding = new Set(r.deciding);
  const rootUri = pathToFileURL(r.dir.endsWith("/") ? r.dir : `${r.dir}/`).href;
  return {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: TOOL_NAME,
            version: SCANNER_VERSION,
            semanticVersion: "1.0.0",
            informationUri: "https://hermes-kit.dev/docs/scanner",
            rules,
          },
        },
        originalUriBaseIds: { PLUGINROOT: { uri: rootUri } },
        invocations: [{ executionSuccessful: true }],
        results: r.findings.map((f) => result(f, ruleIndex, deciding)),
        properties: {
          verdict: r.verdict,
          summary: r.summary,
          deciding: r.deciding.map((f) => ({ id: f.id, file: f.file, line: f.line })),
          skipped: r.skipped,
          ...(r.pluginKey ? { pluginKey: r.pluginKey } : {}),
          ...(r.revision ? { revision: r.revision } : {}),
        },
      },
    ],
  };
}

export function renderSarif(r: ScanReport): string {
  return `${JSON.stringify(renderSarifObject(r), null, 2)}\n`;
}
