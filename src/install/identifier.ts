import { HermesError } from "../core/errors.js";

/**
 * What `hermes plugins install <identifier>` was asked for, before any I/O.
 *
 * - a bare index name (no `/`, no `\`, no scheme): resolved through the community index;
 * - anything else maps to a clone URL, an optional subdirectory and an optional branch.
 *
 * Explicit `owner/repo` and URLs never consult the index.
 */
export type Identifier =
  | { kind: "index"; name: string }
  | {
      kind: "git";
      /** The URL as given (may carry credentials; never printed or stored). */
      url: string;
      subdir?: string;
      /**
       * GitHub `/tree/<rest…>` URLs: the segments after `tree`. Which leading segments name the
       * branch (branches may contain `/`) is decided against the remote's refs (see git.ts).
       */
      treePath?: string[];
    };

const SCHEMES = ["https://", "http://", "git@", "ssh://", "file://", "git://"];

/** GitHub web-UI path segments after owner/repo that are not part of the repository URL. */
const GITHUB_BROWSER_SEGMENTS = new Set([
  "actions",
  "blob",
  "commit",
  "commits",
  "issues",
  "pull",
  "pulls",
  "releases",
  "tree",
  "wiki",
]);

export function hasScheme(id: string): boolean {
  const lower = id.toLowerCase();
  return SCHEMES.some((s) => lower.startsWith(s));
}

export function isBareName(id: string): boolean {
  return !id.includes("/") && !id.includes("\\") && !hasScheme(id);
}

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, "");
}

function invalid(id: string, why?: string): HermesError {
  return new HermesError("E_INSTALL_IDENTIFIER", {
    message: `invalid plugin identifier '${id}'${why ? `: ${why}` : ""}`,
  });
}

export function parseIdentifier(raw: string): Identifier {
  const id = raw.trim();
  if (!id) throw invalid(raw, "it is empty");
  if (/[\u0000-\u001f\u007f]/.test(id))
    throw invalid(JSON.stringify(raw).slice(1, -1), "it contains control characters");
  // An argument that looks like an option must never reach git's command line.
  if (id.startsWith("-")) throw invalid(id, "it starts with '-'");
  if (isBareName(id)) {
    if (id === "." || id === "..") throw invalid(id);
    return { kind: "index", name: id };
  }
  if (hasScheme(id)) {
    if (/^https:\/\/github\.com\//i.test(id)) {
      const path = trimSlashes(id.slice("https://github.com/".length).split(/[?#]/)[0]!);
      const segs = path.split("/");
      if (segs.length >= 3 && segs[0] && segs[1] && GITHUB_BROWSER_SEGMENTS.has(segs[2]!)) {
        const url = `https://github.com/${segs[0]}/${segs[1].replace(/\.git$/i, "")}.git`;
        if (segs[2] === "tree" && segs.length >= 4) {
          return { kind: "git", url, treePath: segs.slice(3).filter(Boolean) };
        }
        return { kind: "git", url };
      }
    }
    const hash = id.indexOf("#");
    if (hash >= 0) {
      const sub = trimSlashes(id.slice(hash + 1));
      return { kind: "git", url: id.slice(0, hash), ...(sub ? { subdir: sub } : {}) };
    }
    const dotGit = id.indexOf(".git/");
    if (dotGit >= 0) {
      const sub = trimSlashes(id.slice(dotGit + ".git/".length));
      return { kind: "git", url: id.slice(0, dotGit + ".git".length), ...(sub ? { subdir: sub } : {}) };
    }
    return { kind: "git", url: id };
  }
  if (id.includes("\\")) throw invalid(id, "use '/' between owner, repository and subdirectory");
  const segs = id.split("/").filter(Boolean);
  if (segs.length < 2) {
    throw invalid(id, "use a git URL or 'owner/repo' (optionally 'owner/repo/path/to/plugin')");
  }
  const [owner, repo, ...rest] = segs;
  if (
    !/^[A-Za-z0-9_.-]+$/.test(owner!) ||
    !/^[A-Za-z0-9_.-]+$/.test(repo!) ||
    owner === "." ||
    owner === ".." ||
    repo === "." ||
    repo === ".."
  ) {
    throw invalid(id, "owner and repository may contain letters, digits, '.', '-' and '_' only");
  }
  const url = `https://github.com/${owner}/${repo!.replace(/\.git$/i, "")}.git`;
  return { kind: "git", url, ...(rest.length ? { subdir: rest.join("/") } : {}) };
}

/** `--ref` accepts one thing: a full 40-hex commit SHA (any case), normalized to lowercase. */
export function parseRef(ref: string): string {
  const r = ref.trim();
  if (/^[0-9a-fA-F]{40}$/.test(r)) return r.toLowerCase();
  let what = "it is not a commit SHA";
  if (/^[0-9a-fA-F]{4,39}$/.test(r)) what = `it is a short SHA (${r.length} characters)`;
  else if (/^v?\d+(\.\d+)*([-.+].*)?$/.test(r)) what = "it looks like a tag";
  else if (r) what = "it looks like a branch or tag name";
  throw new HermesError("E_INSTALL_REF_NOT_SHA", {
    message: `--ref '${ref}' is refused: ${what}; --ref must be a full 40-character commit SHA`,
  });
}

export function isFullSha(s: string): boolean {
  return /^[0-9a-fA-F]{40}$/.test(s);
}

// ---------------------------------------------------------------------------------------------
// Credentials: a URL's userinfo is used for the clone and then forgotten.

export interface UrlCredentials {
  username: string;
  password: string;
}

function bracketHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/**
 * The URL with credentials, query and fragment removed (no secret reaches metadata or logs) for
 * http(s) URLs; an ssh:// URL keeps its user name but loses a password. Other forms pass through.
 */
export function scrubUrl(url: string): string {
  const m = /^(https?|ssh|git):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)/i.exec(url);
  if (!m) return url;
  const scheme = m[1]!.toLowerCase();
  const userinfo = m[2];
  const hostport = m[3]!;
  const path = m[4] ?? "";
  if (!hostport) return url;
  let host = hostport;
  let port = "";
  const pm = /^(\[[^\]]+\]|[^:]*)(?::(\d*))?$/.exec(hostport);
  if (pm) {
    host = pm[1]!;
    port = pm[2] ? `:${pm[2]}` : "";
  }
  let user = "";
  if (scheme === "ssh" && userinfo) {
    const u = userinfo.split(":")[0]!;
    if (u) user = `${u}@`;
  }
  return `${scheme}://${user}${bracketHost(host)}${port}${path}`;
}

/** The username and password of an http(s) URL, percent-decoded; undefined when it has none. */
export function urlCredentials(url: string): UrlCredentials | undefined {
  const m = /^https?:\/\/([^@/?#]*)@/i.exec(url);
  if (!m) return undefined;
  const [u, ...p] = m[1]!.split(":");
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return { username: dec(u ?? ""), password: dec(p.join(":")) };
}

/** The repository name a URL points at: last path segment without `.git` (scp-like forms too). */
export function repoNameOf(url: string): string {
  let path = url;
  const scp = /^[^/:]+@[^/:]+:(.*)$/.exec(url);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) path = scp[1]!;
  else path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  const seg = trimSlashes(path.split(/[?#]/)[0]!).split("/").pop() ?? "";
  return seg.replace(/\.git$/i, "");
}

/**
 * Remove secrets from text shown to people: the raw URL becomes its scrubbed form, any other
 * `scheme://user:secret@` loses its userinfo, and well-known token shapes are masked.
 */
export function redactSecrets(text: string, rawUrls: readonly string[] = []): string {
  let out = text;
  for (const raw of rawUrls) {
    if (!raw) continue;
    const clean = scrubUrl(raw);
    if (clean !== raw) out = out.split(raw).join(clean);
    const creds = urlCredentials(raw);
    if (creds) {
      for (const secret of [creds.password, creds.username, encodeURIComponent(creds.password)]) {
        if (secret && secret.length >= 4) out = out.split(secret).join("***");
      }
    }
  }
  out = out.replace(/\b((?:https?|ssh|git):\/\/)[^\s/@'"]*:[^\s/@'"]*@/gi, "$1");
  out = out.replace(/\b(https?:\/\/)[^\s/@:'"]+@/gi, "$1");
  out = out.replace(/([?&](?:access_token|private_token|token|key|password|secret)=)[^&\s'"]+/gi, "$1***");
  out = out.replace(/\b(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-)[A-Za-z0-9_-]{8,}/g, "$1***");
  out = out.replace(/\bsk-[A-Za-z0-9_-]{20,}/g, "sk-***");
  return out;
}
