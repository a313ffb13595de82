/**
 * Secrets never reach people's screens or logs: one word-based test of what a secret is called,
 * one masking of secret-shaped values in text, used wherever output is produced (provider errors,
 * the compile plan, the log stream, the CLI's error printer).
 */

export const MASK = "***";

/** Split a key into lowercase words: `apiKey` → [api, key], `DB_PASSWORD` → [db, password]. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const SECRET_WORDS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "apikey",
  "privatekey",
  "auth",
  "authorization",
  "cookie",
]);
const SECRET_PAIRS = [
  ["api", "key"],
  ["private", "key"],
  ["access", "key"],
  ["secret", "key"],
  ["client", "secret"],
  ["signing", "key"],
];

/**
 * Secret-shaped by whole words, not substrings: `api_key`, `apiKey`, `db_password`,
 * `client_secret`, `token` are secrets; `author`, `max_tokens`, `keyboard` are not.
 */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  if (words.some((w) => SECRET_WORDS.has(w))) return true;
  for (let i = 1; i < words.length; i++) {
    if (SECRET_PAIRS.some(([a, b]) => words[i - 1] === a && words[i] === b)) return true;
  }
  return false;
}

/** Last words that make a secret-named key hold a reference to the secret, not the secret itself. */
const REFERENCE_WORDS = new Set([
  "env",
  "var",
  "variable",
  "name",
  "file",
  "path",
  "url",
  "id",
  "header",
  "type",
  "kind",
  "mode",
  "limit",
  "count",
]);

/** A key whose value is itself a secret: secret-shaped, and not `api_key_env` or `token_file`. */
export function holdsSecret(key: string): boolean {
  const words = keyWords(key);
  if (words.length > 1 && REFERENCE_WORDS.has(words[words.length - 1]!)) return false;
  return isSecretKey(key);
}

/** A copy of a JSON-like value: every secret-holding key's value masked, every string redacted, at any depth. */
export function redactValue<T>(value: T, opts: { pairs?: boolean } = {}): T {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return redactText(v, opts);
    if (depth > 64 || v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[k] =
        holdsSecret(k) && x !== null && x !== undefined && x !== "" && (typeof x !== "object" || Array.isArray(x))
          ? MASK
          : walk(x, depth + 1);
    }
    return out;
  };
  return walk(value, 0) as T;
}

const TOKEN_SHAPES: ReadonlyArray<[RegExp, string]> = [
  // Authorization schemes followed by a credential.
  [/\b(Bearer|Basic|Token|Bot)(\s+)[A-Za-z0-9._~+/=-]{6,}/g, `$1$2${MASK}`],
  [/\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{8,}/g, `sk-${MASK}`],
  [/\b(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-)[A-Za-z0-9_-]{8,}/g, `$1${MASK}`],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, `$1${MASK}`],
  // Userinfo of a URL.
  [/\b((?:https?|ssh|git|wss?):\/\/)[^\s/@'"]*:[^\s/@'"]*@/gi, "$1"],
  // Secret-named query parameters.
  [/([?&](?:access_token|private_token|token|key|api_key|apikey|password|secret)=)[^&\s'"]+/gi, `$1${MASK}`],
];

/** `name: value`, `name=value`, `"name": "value"` pairs: the value is masked when the name holds a secret. */
const PAIR_RE = /(?<![\w.-])(["']?)([A-Za-z_][\w-]*)\1(\s*[:=]\s*)(["']?)([^"'\s,;}&)\]]+)\4/g;

/**
 * Text with secret-shaped values masked: token shapes and credentials in URLs always; with
 * `pairs` (the default) also the values of secret-named keys (`api_key: …`, `"token": "…"`).
 */
export function redactText(text: string, opts: { pairs?: boolean } = {}): string {
  let out = text;
  for (const [re, to] of TOKEN_SHAPES) out = out.replace(re, to);
  if (opts.pairs === false) return out;
  out = out.replace(PAIR_RE, (all: string, q: string, key: string, sep: string, vq: string, value: string) => {
    if (
      !holdsSecret(key) ||
      value === MASK ||
      value.endsWith(MASK) ||
      /^(?:Bearer|Basic|Token|Bot|null|true|false|undefined)$/i.test(value)
    )
      return all;
    return `${q}${key}${q}${sep}${vq}${MASK}${vq}`;
  });
  return out;
}
