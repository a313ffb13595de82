/**
 * The release of the original Hermes whose plugin API hermes-kit implements: what a manifest's
 * `requires_hermes` is checked against (real plugins ask for up to >=0.21.4).
 */
export const HERMES_COMPAT_VERSION = "0.21.4";

const OPS = [">=", "<=", "==", "!=", ">", "<"] as const;
type Op = (typeof OPS)[number];

/** The first three numeric parts, `v` and pre-release/build suffixes dropped; undefined when none. */
function parts(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/i.exec(version.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/**
 * Whether `spec` admits `current`, as the original's gate decides: comma-separated clauses, all
 * must hold; a bare version means `>=`; an unparseable clause or version passes (never a guess).
 */
export function satisfiesHermes(spec: string, current: string = HERMES_COMPAT_VERSION): boolean {
  const cur = parts(current);
  if (!cur) return true;
  for (const raw of spec.split(",")) {
    const clause = raw.trim();
    if (!clause) continue;
    const op: Op = OPS.find((o) => clause.startsWith(o)) ?? ">=";
    const want = parts(clause.slice(clause.startsWith(op) ? op.length : 0));
    if (!want) continue;
    const c = compare(cur, want);
    const ok =
      op === ">="
        ? c >= 0
        : op === "<="
          ? c <= 0
          : op === "=="
            ? c === 0
            : op === "!="
              ? c !== 0
              : op === ">"
                ? c > 0
                : c < 0;
    if (!ok) return false;
  }
  return true;
}

/** Why a plugin with this `requires_hermes` does not load here, or undefined when it may. */
export function requiresHermesProblem(spec: string | undefined): string | undefined {
  if (!spec || satisfiesHermes(spec)) return undefined;
  return `requires hermes ${spec}, running ${HERMES_COMPAT_VERSION} (the Hermes plugin API hermes-kit implements)`;
}
