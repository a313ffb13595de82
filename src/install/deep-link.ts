import { HermesError } from "../core/errors.js";

/**
 * The `hermes://` links a web page or README can carry (what a desktop scheme registration hands to
 * `hermes open-url`), parsed before any I/O. Everything not listed here is refused by name.
 *
 * - `hermes://plugin/install?repo=owner/repo[&enable=1][&force=1]` (also the legacy hosts
 *   `plugin-agent` and `plugin-desktop`, and the `hermes-dev://` scheme of development builds);
 * - `hermes://mcp/install?name=NAME&config=BASE64URL-JSON` (`mcp/add` too).
 */
export type DeepLink =
  | { kind: "plugin"; scheme: string; owner: string; repo: string; enable: boolean; force: boolean }
  | { kind: "mcp"; scheme: string; name: string; config: Record<string, unknown> };

const SCHEMES = new Set(["hermes:", "hermes-dev:"]);
const PLUGIN_HOSTS = new Set(["plugin", "plugin-agent", "plugin-desktop"]);
const MCP_PATHS = new Set(["/install", "/add"]);
const PART = /^[A-Za-z0-9_.-]+$/;
/** The kit's MCP server name rule (src/agent/mcp/config.ts). */
const MCP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Decoded MCP config payloads above this are refused (as the original does). */
export const MCP_LINK_MAX_BYTES = 32 * 1024;

function invalid(message: string): HermesError {
  return new HermesError("E_DEEPLINK_INVALID", { message });
}

/** A link as it may be shown: control characters escaped, length bounded. */
export function shownLink(raw: string): string {
  const s = JSON.stringify(raw).slice(1, -1);
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

export function isDeepLink(raw: string): boolean {
  return /^\s*hermes(-dev)?:/i.test(raw);
}

/** Each parameter once, and only the allowed ones. */
function params(u: URL, allowed: readonly string[], what: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of u.searchParams) {
    if (!allowed.includes(k)) {
      throw invalid(`unknown parameter '${shownLink(k)}' in a ${what} link (allowed: ${allowed.join(", ")})`);
    }
    if (out.has(k)) throw invalid(`parameter '${k}' is given more than once`);
    out.set(k, v);
  }
  return out;
}

function flag(p: Map<string, string>, key: string): boolean {
  const v = p.get(key);
  if (v === undefined || v === "0") return false;
  if (v === "1") return true;
  throw invalid(`parameter '${key}' must be 1 or 0, not '${shownLink(v)}'`);
}

/** `owner/repo` exactly: no transport (`file:`, `ext::`, a URL), no path beyond the repository. */
function repoOf(raw: string | undefined): { owner: string; repo: string } {
  if (raw === undefined || !raw.trim()) throw invalid("the link has no repo parameter (repo=owner/repo)");
  const r = raw.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(r) || r.includes("::")) {
    throw invalid(`repo '${shownLink(r)}' names a transport or URL; a link may only name a GitHub owner/repo`);
  }
  const segs = r.split("/");
  const [owner, repo] = segs;
  const ok = (s: string | undefined) =>
    s !== undefined && PART.test(s) && s !== "." && s !== ".." && !s.startsWith("-");
  if (segs.length !== 2 || !ok(owner) || !ok(repo)) {
    throw invalid(
      `repo '${shownLink(r)}' is not owner/repo (letters, digits, '.', '-' and '_' only, one '/', no leading '-')`,
    );
  }
  return { owner: owner!, repo: repo!.replace(/\.git$/i, "") };
}

/** base64url or standard base64 of a JSON object, at most 32 KiB decoded. */
function mcpConfigOf(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || !raw) throw invalid("the link has no config parameter (base64url-encoded JSON)");
  const b64 = raw.replace(/-/g, "+").replace(/_/g, "/").replace(/\s/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw invalid("config is not base64 or base64url");
  const bytes = Buffer.from(b64, "base64");
  if (bytes.length > MCP_LINK_MAX_BYTES) {
    throw invalid(`config is ${bytes.length} bytes decoded; at most ${MCP_LINK_MAX_BYTES} are accepted`);
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid("config does not decode to JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid("config must decode to a JSON object");
  }
  const cfg = value as Record<string, unknown>;
  const hasUrl = typeof cfg.url === "string";
  if (hasUrl && !/^https?:\/\//i.test(cfg.url as string)) throw invalid("config.url must be http:// or https://");
  if (!hasUrl && typeof cfg.command !== "string") throw invalid("config needs a string url or a string command");
  return cfg;
}

export function parseDeepLink(raw: string): DeepLink {
  const text = raw.trim();
  if (/[\u0000-\u001f\u007f]/.test(text)) throw invalid(`link '${shownLink(raw)}' contains control characters`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid(`'${shownLink(raw)}' is not a URL`);
  }
  const scheme = u.protocol.toLowerCase();
  if (!SCHEMES.has(scheme)) {
    throw invalid(`'${shownLink(raw)}' is not a hermes:// or hermes-dev:// link (scheme '${shownLink(scheme)}')`);
  }
  if (u.username || u.password || u.port || u.hash) throw invalid("a link carries no user, port or #fragment");
  const host = u.hostname.toLowerCase();
  const path = u.pathname.replace(/\/+$/, "");
  if (PLUGIN_HOSTS.has(host) && path === "/install") {
    const p = params(u, ["repo", "enable", "force"], "plugin install");
    return { kind: "plugin", scheme, ...repoOf(p.get("repo")), enable: flag(p, "enable"), force: flag(p, "force") };
  }
  if (host === "mcp" && MCP_PATHS.has(path)) {
    const p = params(u, ["name", "config"], "MCP");
    const name = p.get("name") ?? "";
    if (!MCP_NAME.test(name)) {
      throw invalid(
        `MCP server name '${shownLink(name)}' must be 1–64 letters, digits, '_', '-' or '.', starting with a ` +
          "letter or digit",
      );
    }
    return { kind: "mcp", scheme, name, config: mcpConfigOf(p.get("config")) };
  }
  throw invalid(
    `unknown link '${shownLink(`${scheme}//${host}${path}`)}'; hermes-kit handles ${scheme}//plugin/install and ` +
      `${scheme}//mcp/install`,
  );
}
