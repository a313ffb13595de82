/**
 * The pattern catalog of the plugin scanner: one table, one row per finding id.
 *
 * Ids, severities and categories follow the original's engine with the plugin
 * remaps already applied, so reports and waivers stay comparable. The regexes are our own,
 * written for the code plugins actually ship: JavaScript/TypeScript (ours), Python (the original's)
 * and shell. Rows marked "hermes-kit" are ids the original does not have.
 *
 * How a row is applied (see scan.ts and adjust.ts):
 * - `scope: "code"` rows describe things that execute. They run on code, config and other text
 *   files, never on docs (md/txt/rst/html examples do not execute), never on comment or docstring
 *   lines, and never in test trees.
 * - `scope: "prose"` rows describe text an agent reads (prompt injection, instructions to edit
 *   agent config). They run on docs, config and code, never in test trees; `notInCode` rows are the
 *   ids that docstrings and UI strings trip, so they are skipped in code files.
 * - `scope: "any"` rows (secrets, invisible characters) run everywhere; in test trees they are
 *   reported at low severity.
 * - `scope: "tree"` rows are structural checks made by the walker (no regex).
 * - `re` is tested line by line (one finding per row per line). With `args`, `re` finds a call and
 *   `args` must match inside its balanced parentheses (which may span a few lines).
 * - `adjust` names a context rule of adjust.ts (provider exemption, placeholders, …).
 */
import type { Lang } from "./files.js";
import type { Category, Severity } from "./types.js";

export type Scope = "code" | "prose" | "any" | "tree";

export type AdjustRule =
  /** Drop when every environment variable read in the match is declared in requires_env/optional_env. */
  | "env-read"
  /** HTTP call or curl/wget carrying a secret from the environment (see adjust.ts). */
  | "env-exfil"
  /** Drop placeholders and low-entropy values ("your-api-key-here", "sk-xxxx…", AWS's EXAMPLE key). */
  | "secret-value"
  /** Drop `../..` inside an import specifier that stays inside the plugin folder. */
  | "relative-import"
  /** Drop zero-width joiners inside emoji and joiners in scripts that need them; a BOM on line 1. */
  | "invisible"
  /** Drop when every URL on the line is a loopback address. */
  | "loopback"
  /** JS/Python: a command that a string literal only mentions is reported at medium (see adjust.ts). */
  | "command-mention"
  /** Keep only when the concatenated string literals spell a guarded module name. */
  | "joined-module";

export interface PatternSpec {
  readonly id: string;
  readonly severity: Severity;
  readonly category: Category;
  readonly scope: Scope;
  readonly description: string;
  readonly re?: RegExp;
  readonly args?: RegExp;
  /**
   * Lowercase substrings of which a line must contain at least one for `re` to match there (a
   * cheap whole-file check before any regex runs). They must be necessary: a test scans the
   * corpus with and without them and expects the same findings.
   */
  readonly needles?: readonly string[];
  /** Only in these languages (see files.ts; config files are `config`). */
  readonly langs?: readonly Lang[];
  /** Only in files whose whole text matches this (e.g. the file imports child_process). */
  readonly fileGuard?: RegExp;
  /** Only in files whose base name matches this. */
  readonly files?: RegExp;
  /** A prose row that is not scored in code files (docstrings and UI strings trip it). */
  readonly notInCode?: true;
  /** In docs this row is scored at this severity instead. */
  readonly docSeverity?: Severity;
  readonly adjust?: AdjustRule;
  /** The original engine's severity when the plugin policy remaps it, for the record. */
  readonly guardSeverity?: Severity;
  /** True for ids hermes-kit adds to the original's set. */
  readonly ours?: true;
}

// ── building blocks (all case-insensitive unless a row says otherwise) ─────────────────────────

/** An environment variable name that holds a secret. */
const SECRET_NAME = String.raw`\w*?(?:api_?key|key|token|secret|passw(?:or)?d|pwd|credentials?)s?\b`;
const Q = String.raw`["'\x60]`;
/** JS: `process.env.OPENAI_API_KEY`, `process.env["X_TOKEN"]`, `Deno.env.get("X_KEY")`. */
const JS_ENV_SECRET =
  String.raw`(?:(?:process|Bun)\.env(?:\?\.|\.|\[\s*${Q})|Deno\.env\.get\(\s*${Q}|` +
  String.raw`import\.meta\.env\.)${SECRET_NAME}`;
/** JS: the whole environment as a value. */
const JS_ENV_BULK =
  String.raw`JSON\.stringify\(\s*(?:\{\s*\.\.\.\s*)?process\.env\b|\.\.\.\s*process\.env\b|` +
  String.raw`Object\.(?:entries|keys|values)\(\s*process\.env\b|\bprocess\.env\s*[,)}\]]`;
const PY_ENV_SECRET = String.raw`os\.(?:environ(?:\.get)?\s*[[(]\s*[rbuf]?["']|getenv\(\s*[rbuf]?["'])${SECRET_NAME}`;
const PY_ENV_BULK =
  String.raw`dict\(\s*os\.environ\s*\)|\*\*\s*os\.environ\b|\bos\.environ\s*[,)}\]]|os\.environ\.(?:items|` +
  String.raw`copy|keys|values)\(`;
/** Shell-style interpolation of a secret-named variable. */
const SH_ENV_SECRET = String.raw`\$\{?${SECRET_NAME}`;

/** A home-directory reference followed by a dot-folder. */
function homeDir(folder: string): RegExp {
  return new RegExp(
    String.raw`(?:~|\$\{?HOME\}?|%USERPROFILE%)[\\/]${folder}\b|(?:homedir\(\)|Path\.home\(\)|` +
      String.raw`expanduser\(\s*["']~["']\s*\))[^\n]{0,40}?["'\x60/\\]${folder}\b`,
    "i",
  );
}

const AGENT_FILES = String.raw`(?:AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.clinerules|\.windsurfrules)`;
const HERMES_FILES =
  String.raw`(?:\.hermes[\\/](?:config\.yaml|SOUL\.md|\.env)|(?:HERMES_HOME|hermesHome|` +
  String.raw`hermes_home)\b[^\n]{0,40}?["'\x60/\\](?:config\.yaml|SOUL\.md))`;
const OTHER_AGENT_FILES =
  String.raw`(?:\.claude[\\/]settings[\w.]*|\.codex[\\/]config[\w.]*|\.cursor[\\/]mcp\.json|` +
  String.raw`\.gemini[\\/]settings\.json)`;

const AGENT_NEEDLES = ["agents.md", "claude.md", "gemini.md", ".cursorrules", ".clinerules", ".windsurfrules"];
const HERMES_NEEDLES = [".hermes", "hermes_home", "hermeshome"];
const OTHER_AGENT_NEEDLES = [".claude", ".codex", ".cursor", ".gemini"];

const MODIFY_VERB =
  String.raw`(?:write|writes|writing|edit|edits|editing|modify|modifies|modifying|update|updates|updating|` +
  String.raw`append|appends|appending|prepend|prepends|insert|inserts|inject|injects|overwrite|overwrites|` +
  String.raw`replace|replaces|alter|alters|add|adds|adding|put)`;
/** Prose that tells the reader to change a file: an imperative verb at the start of a line or bullet, or after "you
 * must" and friends. */
function proseModify(files: string): RegExp {
  return new RegExp(
    String.raw`(?:^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)?|\b(?:you\s+(?:must|should|need\s+to|have\s+to)|please|` +
      String.raw`make\s+sure\s+(?:to|you)|be\s+sure\s+to|always|silently|` +
      String.raw`quietly)\s+)${MODIFY_VERB}\b[^\n,;]{0,80}?${files}`,
    "i",
  );
}
/** A mechanical write: shell redirect, tee, sed -i, cp/mv/ln into the file, or a file-writing API. */
function mechanicalWrite(files: string): RegExp {
  return new RegExp(
    String.raw`(?:(?<![=\-<>])>>?\s*|\btee\s+(?:-a\s+)?|\bsed\s+[^\n]*?(?:-i\b|--in-place)[^\n]*?\s|` +
      String.raw`\b(?:cp|mv|ln|install)\s+(?:-\w+\s+)*[^\s|;&]+\s+)["'\x60]?[~\w.\\/$\{\}-]*?${files}` +
      String.raw`|\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|write_text|` +
      String.raw`write_bytes|copyFile|copyFileSync|copy2?|copyfile|move|rename|renameSync|symlink|` +
      String.raw`symlinkSync)\s*\([^\n]{0,160}?${files}` +
      String.raw`|\bopen\s*\([^\n)]{0,160}?${files}[^\n)]{0,40}?,\s*[rbuf]?["'][^"']*[wa+]`,
    "i",
  );
}
function contentContract(files: string): RegExp {
  return new RegExp(
    String.raw`${files}[^\n]{0,40}?\b(?:should|must|needs?\s+to|has\s+to)\s+(?:contain|say|include|have|` +
      String.raw`list|start\s+with)\b`,
    "i",
  );
}

const TEMP_ROOTS = String.raw`(?:tmp|var/tmp|dev/shm|run)(?:[/\s"'\x60*]|$)`;
// Options are "-x…" or "--x…" with the word starting right after the dashes: one way to split them (no backtracking
// blow-up).
const RM_RECURSIVE = String.raw`\brm\s+(?:-{1,2}\w[\w-]*\s+)*?-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-{1,2}\w[\w-]*\s+)*`;
const JS_FS_REMOVE =
  String.raw`(?:\b(?:fs|fsp|fse|promises|fs\.promises)\.(?:rm|rmdir|rmSync|rmdirSync|remove|removeSync|` +
  String.raw`emptyDir|emptyDirSync)|\b(?:rmSync|rmdirSync|rimraf(?:Sync)?|rimraf\.sync|removeSync|` +
  String.raw`emptyDirSync))\s*\(\s*`;
/** `rm` with a recursive flag as an argument vector: spawn("rm", ["-rf", …]), subprocess.run(["rm", "-r", …]). */
const RM_ARGV =
  String.raw`(?:\b(?:spawn|spawnSync|execFile|execFileSync|execa|` +
  String.raw`execaSync)\s*\(\s*["'\x60]rm["'\x60]\s*,\s*\[|\b(?:subprocess\.\w+|Popen|` +
  String.raw`os\.execvp?)\s*\(\s*\[\s*["']rm["']\s*,)\s*(?:["'\x60]-{1,2}\w[\w-]*["'\x60]\s*,\s*)*?["'\x60]` +
  String.raw`-[a-zA-Z]*[rR][a-zA-Z]*["'\x60]`;
const HOME_VALUE =
  String.raw`(?:(?:os\.)?homedir\(\)|process\.env\.HOME\b|Path\.home\(\)|` +
  String.raw`os\.path\.expanduser\(\s*["']~/?["']\s*\)|["'\x60]~/?["'\x60])`;

const INVISIBLE = "[\\u200B-\\u200D\\u2060-\\u2064\\uFEFF\\u202A-\\u202E\\u2066-\\u2069\\u{E0000}-\\u{E007F}]";

export const SCAN_PATTERNS = [
  // ── Credential access and exfiltration ─────────────────────────────────────────────────────
  {
    id: "env_exfil_curl",
    needles: ["curl"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    adjust: "env-exfil",
    description: "curl command line carrying a secret from the environment",
    re: new RegExp(String.raw`\bcurl\b[^\n]*?${SH_ENV_SECRET}|\bcurl\b[^\n]*?${JS_ENV_SECRET}`, "i"),
  },
  {
    id: "env_exfil_wget",
    needles: ["wget"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    adjust: "env-exfil",
    description: "wget command line carrying a secret from the environment",
    re: new RegExp(String.raw`\bwget\b[^\n]*?${SH_ENV_SECRET}|\bwget\b[^\n]*?${JS_ENV_SECRET}`, "i"),
  },
  {
    id: "env_exfil_fetch",
    needles: ["fetch", "axios", "got", "ky", "needle", "superagent", "http", "undici", "sendbeacon", "websocket"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    adjust: "env-exfil",
    langs: ["js", "other"],
    description:
      "HTTP request (fetch, axios, got, http.request, …) whose arguments carry an environment secret or the " +
      "whole environment",
    re: new RegExp(
      String.raw`(?<![\w$.])(?:fetch|\$fetch|ofetch|axios|got|ky|needle|superagent)(?:\.(?:get|post|put|` +
        String.raw`patch|delete|request))?\s*\(|\b(?:https?|undici)\.(?:request|get|fetch)\s*\(|` +
        String.raw`\bnavigator\.sendBeacon\s*\(|\bnew\s+WebSocket\s*\(`,
      "i",
    ),
    args: new RegExp(`${JS_ENV_SECRET}|${JS_ENV_BULK}`, "i"),
  },
  {
    id: "env_exfil_httpx",
    needles: ["httpx"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    adjust: "env-exfil",
    langs: ["py"],
    description: "httpx request whose arguments carry an environment secret or the whole environment",
    re: new RegExp(
      String.raw`\bhttpx\.(?:get|post|put|patch|delete|request|stream)\s*\(|\b(?:client|aclient|async_client|` +
        String.raw`http_client)\.(?:get|post|put|patch|request)\s*\(`,
    ),
    fileGuard: /\bhttpx\b/,
    args: new RegExp(`${PY_ENV_SECRET}|${PY_ENV_BULK}`, "i"),
  },
  {
    id: "env_exfil_requests",
    needles: [".get", ".post", ".put", ".patch", ".delete", ".request", ".head", "urlopen"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    adjust: "env-exfil",
    langs: ["py"],
    description: "requests/urllib request whose arguments carry an environment secret or the whole environment",
    re: new RegExp(
      String.raw`\brequests\.(?:get|post|put|patch|delete|request|head)\s*\(|\b(?:session|sess|s)\.(?:get|` +
        String.raw`post|put|patch)\s*\(|\burlopen\s*\(|\burllib\.request\.Request\s*\(`,
    ),
    args: new RegExp(`${PY_ENV_SECRET}|${PY_ENV_BULK}`, "i"),
  },
  {
    id: "env_secret_sent",
    severity: "medium",
    category: "exfiltration",
    scope: "code",
    ours: true,
    description:
      "network call carries an environment secret the manifest does not declare (declare it in requires_env)",
  },
  {
    id: "encoded_exfil",
    needles: ["base64"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    notInCode: true,
    description: "base64 encoding combined with the environment",
    re: /\bbase64\b[^\n]*\benv\b|\benv\b[^\n]*\|\s*base64\b/i,
  },
  {
    id: "ssh_dir_access",
    needles: [".ssh"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "refers to the user's SSH folder",
    re: homeDir(String.raw`\.ssh`),
  },
  {
    id: "aws_dir_access",
    needles: [".aws"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "refers to the user's AWS credentials folder",
    re: homeDir(String.raw`\.aws`),
  },
  {
    id: "gpg_dir_access",
    needles: [".gnupg"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "refers to the user's GPG keyring",
    re: homeDir(String.raw`\.gnupg`),
  },
  {
    id: "kube_dir_access",
    needles: [".kube"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "refers to the user's Kubernetes config folder",
    re: homeDir(String.raw`\.kube`),
  },
  {
    id: "docker_dir_access",
    needles: [".docker"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "refers to the user's Docker config (registry credentials)",
    re: homeDir(String.raw`\.docker`),
  },
  {
    id: "hermes_env_access",
    needles: [".env"],
    severity: "medium",
    guardSeverity: "critical",
    category: "exfiltration",
    scope: "code",
    description: "mentions the Hermes secrets file (~/.hermes/.env); reading it is read_secrets_file",
    re: /\.hermes[\\/]\.env\b|\bHERMES_HOME\b[^\n]{0,40}?["'`/\\]\.env\b/i,
  },
  {
    id: "read_secrets_file",
    needles: [".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", "id_"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    description:
      "shell command reads a known secrets file (.env, credentials, .netrc, .pgpass, .npmrc, .pypirc, SSH keys)",
    re: new RegExp(
      String.raw`(?:^|[\s;&|(` +
        "`" +
        String.raw`"'])(?:cat|less|more|head|tail|base64|xxd|od|strings|scp|` +
        String.raw`curl\s+[^\n]*-[dFT]\s*@?)\s+(?!>)[^\n|;&]*?(?:(?:^|[\s/"'~])\.env\b(?![.\w-])|` +
        String.raw`\.aws[\\/]credentials\b|\bcredentials\.json\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|` +
        String.raw`\.git-credentials\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub))`,
      "i",
    ),
  },
  {
    id: "js_read_secrets_file",
    needles: [".ssh", ".aws", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".hermes", ".env"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    langs: ["js", "other"],
    description:
      "JavaScript reads a known credential file (SSH private key, AWS credentials, .netrc, .npmrc, the Hermes .env)",
    re: new RegExp(
      String.raw`\b(?:readFile|readFileSync|createReadStream|readTextFile|Bun\.file|` +
        String.raw`open)\s*\([^\n]{0,160}?(?:\.ssh["'` +
        "`" +
        String.raw`]?\s*,\s*["'` +
        "`" +
        String.raw`]id_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|` +
        String.raw`\.ssh[\\/]+id_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws[\\/]+credentials\b|\.netrc\b|` +
        String.raw`\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.hermes[\\/]+\.env\b|(?:homedir\(\)|` +
        String.raw`HOME)[^\n]{0,40}?["'` +
        "`" +
        String.raw`/\\]\.env["'` +
        "`" +
        String.raw`])`,
      "i",
    ),
  },
  {
    id: "python_read_secrets_file",
    needles: [".ssh", ".aws", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".hermes"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    langs: ["py"],
    ours: true,
    description: "Python reads a known credential file (SSH private key, AWS credentials, .netrc, the Hermes .env)",
    re: new RegExp(
      String.raw`\b(?:open|read_text|read_bytes|Path)\s*\([^\n]{0,160}?(?:\.ssh[\\/]+id_(?:rsa|ed25519|ecdsa|` +
        String.raw`dsa)\b(?!\.pub)|\.aws[\\/]+credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|` +
        String.raw`\.git-credentials\b|\.hermes[\\/]+\.env\b)`,
      "i",
    ),
  },
  {
    id: "dump_all_env",
    needles: ["env", "export"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    description: "shell dumps every environment variable (printenv, env |)",
    re: /\bprintenv\b(?!\s+[A-Z_]{2,}\b)|(?<![\w.$-])env\s*\|(?!\|)|\bexport\s+-p\s*\|/,
  },
  {
    id: "python_os_environ",
    needles: ["os.environ"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    langs: ["py"],
    description: "Python reads the whole environment (dict(os.environ), json.dumps(os.environ), iteration)",
    re: new RegExp(
      String.raw`\b(?:dict|json\.dumps|str|repr|list|sorted|print)\s*\(\s*os\.environ\b|` +
        String.raw`\bfor\s+\w+(?:\s*,\s*\w+)?\s+in\s+os\.environ\b|\bos\.environ\.(?:items|keys|values)\s*\(`,
    ),
  },
  {
    id: "python_environ_get_secret",
    needles: ["os.environ"],
    severity: "medium",
    category: "exfiltration",
    scope: "code",
    langs: ["py"],
    adjust: "env-read",
    description: "Python reads a secret from os.environ (normal for an API key; dropped when the manifest declares it)",
    re: new RegExp(String.raw`os\.environ(?:\.get)?\s*[[(]\s*[rbuf]?["']${SECRET_NAME}`, "i"),
  },
  {
    id: "python_getenv_secret",
    needles: ["os.getenv"],
    severity: "medium",
    category: "exfiltration",
    scope: "code",
    langs: ["py"],
    adjust: "env-read",
    description: "Python reads a secret with os.getenv (normal for an API key; dropped when the manifest declares it)",
    re: new RegExp(String.raw`os\.getenv\(\s*[rbuf]?["']${SECRET_NAME}`, "i"),
  },
  {
    id: "node_process_env",
    needles: ["process.env"],
    severity: "high",
    category: "exfiltration",
    scope: "code",
    langs: ["js", "other"],
    description:
      "JavaScript serializes or enumerates the whole environment (JSON.stringify(process.env), " +
      "Object.entries(process.env), for…in)",
    re: new RegExp(
      String.raw`JSON\.stringify\(\s*(?:\{\s*\.\.\.\s*)?process\.env\b|Object\.(?:entries|keys|` +
        String.raw`values)\(\s*process\.env\b|\bin\s+process\.env\b\s*\)`,
    ),
  },
  {
    id: "node_env_secret",
    needles: ["process.env", "bun.env", "deno.env", "import.meta.env"],
    severity: "medium",
    category: "exfiltration",
    scope: "code",
    langs: ["js", "other"],
    adjust: "env-read",
    ours: true,
    description:
      "JavaScript reads a secret from process.env (normal for an API key; dropped when the manifest declares it)",
    re: new RegExp(JS_ENV_SECRET, "i"),
  },
  {
    id: "node_env_dynamic",
    needles: ["process.env", "bun.env"],
    severity: "medium",
    category: "exfiltration",
    scope: "code",
    langs: ["js"],
    ours: true,
    description: "JavaScript reads process.env with a computed key",
    re: /(?:process|Bun)\.env\[\s*(?![\s"'`])/,
  },
  {
    id: "ruby_env_secret",
    needles: ["env"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    langs: ["rb"],
    adjust: "env-read",
    description: "Ruby reads a secret through ENV[]",
    re: /\bENV(?:\.fetch\(|\[)[^\]\n]*(?:KEY|TOKEN|SECRET|PASSWORD)/,
  },
  {
    id: "dns_exfil",
    needles: ["dig", "nslookup", "host", "drill"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    description: "DNS lookup command whose queried name is built from a variable (data leaves in the name)",
    re: new RegExp(
      String.raw`(?:^|[;&|(` +
        "`" +
        String.raw`"'=]\s*|\$\(\s*)(?:dig|nslookup|host|` +
        String.raw`drill)\s+(?:[-+@]\S*\s+(?:[A-Za-z]{1,6}\s+)?)*["']?[^\s"'$]*\$[{(\w]`,
    ),
  },
  {
    id: "tmp_staging",
    needles: ["/tmp/"],
    severity: "critical",
    category: "exfiltration",
    scope: "code",
    description: "writes to /tmp and then sends it somewhere in one command line",
    re: />\s*\/tmp\/\S*\s*(?:&&|;|\|\|?)\s*(?:curl|wget|nc|ncat|scp|rsync|python3?)\b/,
  },
  {
    id: "md_image_exfil",
    needles: ["http"],
    severity: "high",
    category: "exfiltration",
    scope: "prose",
    description: "markdown image whose URL is filled from a variable (the image load leaks data)",
    re: /!\[[^\]\n]*\]\(\s*https?:\/\/[^)\s]*(?:\$\{|\{\{|\$[A-Za-z_]|%\(|<[A-Z_]+>)/,
  },
  {
    id: "md_link_exfil",
    needles: ["http"],
    severity: "high",
    category: "exfiltration",
    scope: "prose",
    description: "markdown link whose URL is filled from a variable",
    re: /(?<!!)\[[^\]\n]*\]\(\s*https?:\/\/[^)\s]*(?:\$\{|\{\{|\$[A-Za-z_]|%\(|<[A-Z_]+>)/,
  },
  {
    id: "context_exfil",
    needles: ["conversation", "chat", "messages", "history", "context"],
    severity: "high",
    category: "exfiltration",
    scope: "prose",
    notInCode: true,
    description: "tells the agent to send or print the conversation, chat history or system prompt",
    re: new RegExp(
      String.raw`\b(?:send|share|post|upload|forward|transmit|leak|print|output|` +
        String.raw`include)\s+(?!(?:\w+\s+){0,3}?(?:never|not|no)\b)(?:\w+\s+){0,3}?(?:the\s+)?(?:(?:entire|` +
        String.raw`full|whole|complete)\s+)?(?:conversation(?:\s+history)?|chat\s+(?:history|log)|` +
        String.raw`previous\s+messages|message\s+history|context\s+window)\b[^\n]{0,60}?\b(?:to|into|in)\b`,
      "i",
    ),
  },
  {
    id: "send_to_url",
    needles: ["http"],
    severity: "high",
    category: "exfiltration",
    scope: "prose",
    notInCode: true,
    description: "tells the agent to send data, files or secrets to a URL",
    re: new RegExp(
      String.raw`\b(?:send|post|upload|transmit|forward|exfiltrate|copy)\s+(?:(?:all|the|your|any|every|` +
        String.raw`their|its|of)\s+){0,3}(?:data|files?|contents?|credentials|secrets?|keys?|tokens?|` +
        String.raw`passwords?|env(?:ironment)?(?:\s+variables)?|conversation|history|messages|memory|` +
        String.raw`memories)\b[^\n]{0,80}?\b(?:to|at)\s+<?https?:\/\/`,
      "i",
    ),
  },

  // ── Reverse shells, tunnels and listeners ──────────────────────────────────────────────────
  {
    id: "reverse_shell",
    needles: ["nc", "netcat", "socat"],
    severity: "critical",
    category: "network",
    scope: "code",
    description: "netcat/ncat listener or exec, or socat exec (reverse or bind shell)",
    re: new RegExp(
      String.raw`(?:^|[\s;&|(` +
        "`" +
        String.raw`"'])(?:nc|ncat|netcat)(?:\.\w+)?\s+(?:[^\n|;&]*\s)?-[a-zA-Z]*[elc][a-zA-Z]*\b|` +
        String.raw`\bsocat\b[^\n]*\b(?:exec|system):`,
    ),
  },
  {
    id: "bash_reverse_shell",
    needles: ["/dev/tcp/", "/dev/udp/"],
    severity: "critical",
    category: "network",
    scope: "code",
    description: "shell redirected to a /dev/tcp or /dev/udp socket",
    re: /\/dev\/(?:tcp|udp)\/(?!localhost\/|127\.0\.0\.1\/)[\w.$\-{}]+\/\$?\w+/,
  },
  {
    id: "python_socket_oneliner",
    needles: ["python"],
    severity: "critical",
    category: "network",
    scope: "code",
    description: "python -c one-liner importing socket or pty (reverse shell)",
    re: /\bpython[23]?(?:\.\d+)?\s+-c\s+["'][^\n]*?\bimport\s+(?:[\w,\s]*\b)?(?:socket|pty)\b/,
  },
  {
    id: "python_socket_connect",
    needles: [".connect"],
    severity: "high",
    category: "network",
    scope: "code",
    langs: ["py"],
    description: "Python socket connect to a fixed host and port",
    re: /\.connect(?:_ex)?\s*\(\s*\(\s*[rbuf]?["']?[\w.-]+["']?\s*,\s*\d{2,5}\s*\)\s*\)/,
  },
  {
    id: "interactive_shell_spawn",
    needles: ["sh"],
    severity: "critical",
    category: "network",
    scope: "code",
    ours: true,
    description: "spawns an interactive shell (the core of a reverse shell)",
    re: new RegExp(
      String.raw`\b(?:spawn|spawnSync|exec|execSync|execFile|execFileSync|Popen|call|run|system|` +
        String.raw`pty\.spawn)\s*\(\s*\[?\s*["'` +
        "`" +
        String.raw`](?:\/(?:usr\/)?bin\/)?(?:ba|z|da|` +
        String.raw`k)?sh(?:\s+-i)?["'` +
        "`" +
        String.raw`]\s*(?:,\s*\[?\s*["'` +
        "`" +
        String.raw`]-i["'` +
        "`" +
        String.raw`]|\))|\b(?:ba|z)?sh\s+-i\s+[<>]&?`,
    ),
  },
  {
    id: "tunnel_service",
    needles: ["ngrok", "localtunnel", "serveo", "cloudflared", "localhost.run", "bore.pub", "loca.lt", "pinggy"],
    severity: "high",
    category: "network",
    scope: "code",
    description: "uses a tunnelling service that exposes the machine to the internet",
    re: /\b(?:ngrok|localtunnel|serveo\.net|cloudflared|localhost\.run|bore\.pub|loca\.lt|pinggy\.io)\b/i,
  },
  {
    id: "bind_all_interfaces",
    needles: ["0.0.0.0", "inaddr_any"],
    severity: "high",
    category: "network",
    scope: "code",
    description: "listens on every network interface",
    re: new RegExp(
      String.raw`(?<![\d.])0\.0\.0\.0:\d{2,5}\b|\bINADDR_ANY\b|\.listen\s*\([^)\n]*["']0\.0\.0\.0["']|` +
        String.raw`\b(?:host|bind|hostname)\s*[=:]\s*["']0\.0\.0\.0["']`,
    ),
  },
  {
    id: "hardcoded_ip_port",
    severity: "medium",
    category: "network",
    scope: "code",
    description: "hard-coded public IP address with a port",
    re: new RegExp(
      String.raw`(?<![\w.])(?!127\.|0\.0\.0\.0|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|` +
        String.raw`169\.254\.)(?:\d{1,3}\.){3}\d{1,3}:\d{2,5}\b|` +
        String.raw`\bconnect\s*\(\s*\d{2,5}\s*,\s*["'](?!127\.)(?:\d{1,3}\.){3}\d{1,3}["']`,
    ),
  },
  {
    id: "exfil_service",
    needles: [
      "webhook.site",
      "requestbin",
      "pipedream",
      "hookbin",
      "beeceptor",
      "interact.sh",
      "oast.",
      "burpcollaborator",
      "canarytokens",
      "requestcatcher",
      "webhook.cool",
    ],
    severity: "high",
    category: "network",
    scope: "code",
    description: "refers to a request-capture or out-of-band service used to exfiltrate data",
    re: new RegExp(
      String.raw`\b(?:webhook\.site|requestbin\.(?:com|net)|pipedream\.net|hookbin\.com|beeceptor\.com|` +
        String.raw`interact\.sh|oast\.(?:pro|live|site|online|fun|me)|burpcollaborator\.net|canarytokens\.com|` +
        String.raw`requestcatcher\.com|webhook\.cool)\b`,
      "i",
    ),
  },
  {
    id: "paste_service",
    needles: ["pastebin", "hastebin", "ghostbin", "paste.ee", "termbin", "transfer.sh", "0x0.st", "file.io", "dpaste"],
    severity: "medium",
    category: "network",
    scope: "code",
    description: "refers to a paste or anonymous file-drop service (possible staging)",
    re: new RegExp(
      String.raw`\b(?:pastebin\.com|hastebin\.com|ghostbin\.\w+|paste\.ee|termbin\.com|transfer\.sh|0x0\.st|` +
        String.raw`file\.io|dpaste\.(?:org|com))\b`,
      "i",
    ),
  },

  // ── Destructive commands ───────────────────────────────────────────────────────────────────
  {
    id: "destructive_root_rm",
    adjust: "command-mention",
    needles: ["rm", "rimraf", "remove", "emptydir"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "recursive delete of / or a system path (temporary roots excepted)",
    re: new RegExp(
      String.raw`${RM_RECURSIVE}["']?\/(?!${TEMP_ROOTS})(?:[\s"'*]|$|[a-z])|\brm\b[^\n]*--no-preserve-root|` +
        String.raw`${JS_FS_REMOVE}["'\x60]\/(?!${TEMP_ROOTS})`,
      "i",
    ),
  },
  {
    id: "destructive_home_rm",
    adjust: "command-mention",
    needles: ["rm", "rimraf", "remove", "emptydir", "rmtree"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "recursive delete of the home folder or one of its key folders",
    re: new RegExp(
      String.raw`${RM_RECURSIVE}[^\n;&|]*?(?:~|\$\{?HOME\}?)\/?(?:\*|\.ssh|\.config|\.hermes|\.gnupg|\.aws|` +
        String.raw`Documents|Desktop)?(?=[\s"';&|]|$)` +
        String.raw`|${JS_FS_REMOVE}${HOME_VALUE}\s*[,)]|\bshutil\.rmtree\s*\(\s*${HOME_VALUE}` +
        // The argument-vector form: spawn("rm", ["-rf", HOME]) / subprocess.run(["rm", "-rf", home]).
        String.raw`|${RM_ARGV}\s*,\s*(?:[^\n\]]*?,\s*)?(?:${HOME_VALUE}|(?<![\w.])(?:HOME|home|homeDir|` +
        String.raw`HOME_DIR)\b|["'\x60]\/["'\x60]|os\.environ\[\s*["']HOME["']\s*\])\s*[\],]`,
      "i",
    ),
  },
  {
    id: "system_overwrite",
    needles: ["/etc/"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "writes into /etc",
    re: new RegExp(
      String.raw`(?<![=\-<>])>>?\s*\/etc\/|\btee\s+(?:-a\s+)?\/etc\/|\b(?:writeFile|writeFileSync|appendFile|` +
        String.raw`appendFileSync|createWriteStream)\s*\(\s*["'` +
        "`" +
        String.raw`]\/etc\/|` +
        String.raw`\bopen\s*\(\s*[rbuf]?["']\/etc\/[^"'\n]*["']\s*,\s*["'][^"']*[wa]`,
    ),
  },
  {
    id: "format_filesystem",
    adjust: "command-mention",
    needles: ["mkfs", "diskutil", "wipefs"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "formats a filesystem",
    re: /\bmkfs(?:\.\w+)?\b|\bdiskutil\s+(?:eraseDisk|eraseVolume|zeroDisk)\b|\bwipefs\b/,
  },
  {
    id: "disk_overwrite",
    adjust: "command-mention",
    needles: ["/dev/"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "raw write to a disk device",
    re: new RegExp(
      String.raw`\bdd\b[^\n]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)|` +
        String.raw`(?<![=\-<>])>\s*\/dev\/(?:sd[a-z]|nvme\d|hd[a-z]|xvd[a-z]|disk\d|mmcblk\d)`,
    ),
  },
  {
    id: "truncate_system",
    needles: ["truncate"],
    severity: "critical",
    category: "destructive",
    scope: "code",
    description: "truncates a system file to zero bytes",
    re: /\btruncate\s+(?:-s\s*0|--size[= ]0)\s+["']?\/(?!tmp\b)/,
  },
  {
    id: "python_rmtree",
    needles: ["rmtree"],
    severity: "high",
    category: "destructive",
    scope: "code",
    langs: ["py"],
    description: "shutil.rmtree on an absolute path",
    re: /\bshutil\.rmtree\s*\(\s*[rbuf]?["'](?:\/|~)/,
  },
  {
    id: "insecure_perms",
    needles: ["777", "511"],
    severity: "medium",
    category: "destructive",
    scope: "code",
    description: "makes files world-writable (777)",
    re: new RegExp(
      String.raw`\bchmod\s+(?:-R\s+)?0?777\b|\bchmod(?:Sync)?\s*\([^)\n]*,\s*(?:0o?777|511)\s*\)|` +
        String.raw`\bos\.chmod\([^)\n]*,\s*0o?777\b`,
    ),
  },
  {
    id: "fork_bomb",
    severity: "critical",
    category: "destructive",
    scope: "code",
    ours: true,
    description: "shell fork bomb",
    re: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/,
  },

  // ── Persistence ────────────────────────────────────────────────────────────────────────────
  {
    id: "ssh_backdoor",
    needles: ["authorized_keys"],
    severity: "critical",
    category: "persistence",
    scope: "code",
    description: "touches SSH authorized_keys (adds a login key)",
    re: /\bauthorized_keys2?\b/,
  },
  {
    id: "sudoers_mod",
    needles: ["/etc/sudoers", "visudo"],
    severity: "critical",
    category: "persistence",
    scope: "code",
    description: "touches sudoers",
    re: /\/etc\/sudoers\b|\bvisudo\b/,
  },
  {
    id: "persistence_cron",
    needles: ["crontab", "/etc/cron.", "/var/spool/cron"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "installs or edits cron jobs",
    re: /\bcrontab\b|\/etc\/cron\.|\/var\/spool\/cron\b/,
  },
  {
    id: "shell_rc_mod",
    needles: [".bashrc", ".zshrc", ".bash_profile", ".bash_login", ".zprofile", ".zlogin", ".zshenv", ".profile"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "refers to a shell startup file (.bashrc, .zshrc, .profile, …)",
    re: /(?:^|[~/\s"'`}])\.(?:bashrc|zshrc|bash_profile|bash_login|zprofile|zlogin|zshenv|profile)\b/,
  },
  {
    id: "systemd_service",
    needles: ["systemctl", "/etc/systemd/", ".config/systemd/user"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "enables or installs a systemd service",
    re: /\bsystemctl\s+(?:--user\s+)?(?:enable|start|daemon-reload|link)\b|\/etc\/systemd\/|\.config\/systemd\/user\b/,
  },
  {
    id: "init_script",
    needles: ["/etc/init.d/", "/etc/rc.local", "update-rc.d"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "installs an init script",
    re: /\/etc\/init\.d\/|\/etc\/rc\.local\b|\bupdate-rc\.d\b/,
  },
  {
    id: "macos_launchd",
    needles: ["launchctl", "launchagents", "launchdaemons"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "macOS launch agent or daemon",
    re: /\blaunchctl\s+(?:load|bootstrap|submit|enable)\b|\bLaunch(?:Agents|Daemons)\b/,
  },
  {
    id: "ssh_keygen",
    needles: ["ssh-keygen"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "generates SSH keys",
    re: /\bssh-keygen\b/,
  },
  {
    id: "git_config_global",
    needles: ["--global", "--system"],
    severity: "medium",
    category: "persistence",
    scope: "code",
    description: "changes global git configuration",
    re: /\bgit\s+config\s+(?:--global|--system)\b/,
  },
  {
    id: "agent_config_mod",
    needles: AGENT_NEEDLES,
    severity: "critical",
    docSeverity: "high",
    category: "persistence",
    scope: "prose",
    notInCode: true,
    description:
      "tells the agent to modify agent instruction files (AGENTS.md, CLAUDE.md, .cursorrules): persists " +
      "instructions across sessions",
    re: proseModify(AGENT_FILES),
  },
  {
    id: "agent_config_mod_shell",
    needles: AGENT_NEEDLES,
    severity: "critical",
    category: "persistence",
    scope: "code",
    description: "writes agent instruction files (shell redirect, tee, sed -i, cp/mv, or a file-writing API)",
    re: mechanicalWrite(AGENT_FILES),
  },
  {
    id: "agent_config_contract",
    needles: AGENT_NEEDLES,
    severity: "high",
    category: "persistence",
    scope: "prose",
    notInCode: true,
    description: "dictates what agent instruction files must contain",
    re: contentContract(AGENT_FILES),
  },
  {
    id: "agent_config_ref",
    needles: AGENT_NEEDLES,
    severity: "low",
    category: "persistence",
    scope: "any",
    description: "mentions agent instruction files (informational)",
    re: new RegExp(AGENT_FILES),
  },
  {
    id: "hermes_config_mod",
    needles: HERMES_NEEDLES,
    severity: "high",
    category: "persistence",
    scope: "prose",
    description: "tells the agent to modify Hermes configuration (config.yaml, SOUL.md)",
    re: proseModify(HERMES_FILES),
  },
  {
    id: "hermes_config_mod_shell",
    needles: HERMES_NEEDLES,
    severity: "critical",
    category: "persistence",
    scope: "code",
    description: "writes Hermes configuration files (config.yaml, SOUL.md, .env)",
    re: mechanicalWrite(HERMES_FILES),
  },
  {
    id: "hermes_config_ref",
    needles: [".hermes"],
    severity: "low",
    category: "persistence",
    scope: "any",
    description: "mentions Hermes configuration files (informational)",
    re: /\.hermes[\\/](?:config\.yaml|SOUL\.md)/,
  },
  {
    id: "other_agent_config_mod",
    needles: OTHER_AGENT_NEEDLES,
    severity: "high",
    category: "persistence",
    scope: "prose",
    description: "tells the agent to modify another agent's configuration",
    re: proseModify(OTHER_AGENT_FILES),
  },
  {
    id: "other_agent_config_mod_shell",
    needles: OTHER_AGENT_NEEDLES,
    severity: "critical",
    category: "persistence",
    scope: "code",
    description: "writes another agent's configuration files",
    re: mechanicalWrite(OTHER_AGENT_FILES),
  },
  {
    id: "other_agent_config_ref",
    needles: OTHER_AGENT_NEEDLES,
    severity: "low",
    category: "persistence",
    scope: "any",
    description: "mentions another agent's configuration files (informational)",
    re: new RegExp(OTHER_AGENT_FILES),
  },

  // ── Obfuscated execution ───────────────────────────────────────────────────────────────────
  {
    id: "base64_decode_pipe",
    needles: ["base64"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    description: "base64-decodes into a pipe",
    re: /\bbase64\s+(?:-\w+\s+)*(?:-d|--decode|-D)\b[^\n|]*\|/,
  },
  {
    id: "echo_pipe_exec",
    needles: ["echo", "printf"],
    severity: "critical",
    category: "obfuscation",
    scope: "code",
    description: "echo/printf piped into an interpreter",
    re: /\b(?:echo|printf)\s+[^\n|]*\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[23]?|perl|ruby|node|php)\b(?!\s*-m\b)/,
  },
  {
    id: "eval_decoded",
    needles: ["eval", "exec", "function", "vm."],
    severity: "critical",
    category: "obfuscation",
    scope: "code",
    ours: true,
    description: "evaluates decoded data (eval/exec/Function of base64, hex, char codes or a decompressed blob)",
    re: new RegExp(
      String.raw`(?:(?<![.\w$])(?:eval|exec)|\bnew\s+Function|\bFunction|\bvm\.run\w*|` +
        String.raw`\bvm\.Script)\s*\(\s*(?:await\s+)?(?:atob|Buffer\.from|base64\.b64decode|b64decode|` +
        String.raw`codecs\.decode|bytes\.fromhex|zlib\.(?:decompress|inflateSync|gunzipSync)|unescape|` +
        String.raw`decodeURIComponent|String\.fromCharCode|marshal\.loads)\b`,
    ),
  },
  {
    id: "eval_string",
    needles: ["eval", "function", "vm.run"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    description: "eval, new Function or vm.run* of a string",
    re: new RegExp(
      String.raw`(?<![.\w$])eval\s*\(\s*[rbuf]?["'` +
        "`" +
        String.raw`]|\bnew\s+Function\s*\([^)\n]*["'` +
        "`" +
        String.raw`]|` +
        String.raw`\bvm\.run(?:InThisContext|InNewContext|InContext)\s*\(\s*["'` +
        "`" +
        String.raw`]`,
    ),
  },
  {
    id: "eval_dynamic",
    needles: ["eval"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "py"],
    ours: true,
    description: "eval of a computed value",
    re: /(?<![.\w$])eval\s*\(\s*(?![rbuf]?["'`)\s])/,
  },
  {
    id: "exec_string",
    needles: ["exec"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    langs: ["py"],
    description: "Python exec of a string",
    re: /(?<![.\w])exec\s*\(\s*[rbuf]?["']/,
  },
  {
    id: "python_compile_exec",
    needles: ["compile"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    langs: ["py"],
    description: "Python compile() in exec mode",
    re: /\bcompile\s*\([^\n]*,\s*["']exec["']\s*\)/,
  },
  {
    id: "python_getattr_builtins",
    needles: ["builtins"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    langs: ["py"],
    description: "dynamic access to Python builtins",
    re: /\bgetattr\s*\(\s*(?:__builtins__|builtins)\b|\b__builtins__\s*\[/,
  },
  {
    id: "python_import_os",
    needles: ["__import__"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    langs: ["py"],
    description: "dynamic import of os, subprocess, socket or pty",
    re: /\b__import__\s*\(\s*["'](?:os|subprocess|socket|pty|ctypes)["']\s*\)/,
  },
  {
    id: "chr_building",
    needles: ["chr"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    description: "string built from chr() calls",
    re: /\bchr\s*\(\s*\d+\s*\)\s*\+\s*chr\s*\(\s*\d+/,
  },
  {
    id: "hex_encoded_string",
    needles: ["\\x"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    description: "long run of hex escapes",
    re: /(?:\\x[0-9a-fA-F]{2}){8,}/,
  },
  {
    id: "unicode_escape_chain",
    needles: ["\\u"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "py", "sh", "rb", "pl", "php", "win", "other"],
    description: "long run of unicode escapes",
    re: /(?:\\u[0-9a-fA-F]{4}){6,}/,
  },
  {
    id: "python_codecs_decode",
    needles: ["codecs"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    langs: ["py"],
    description: "codecs.decode of a literal (ROT13 and friends)",
    re: /\bcodecs\.decode\s*\(\s*[rbuf]?["']/,
  },
  {
    id: "js_char_code",
    needles: ["fromcharcode"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "other"],
    description: "string built from character codes",
    re: /String\.fromCharCode\s*\(\s*(?:\.\.\.|(?:0x[0-9a-f]+|\d+)\s*(?:,\s*(?:0x[0-9a-f]+|\d+)\s*){3,}\))/i,
  },
  {
    id: "js_base64",
    needles: ["atob", "base64"],
    severity: "medium",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "other"],
    description: "JavaScript base64 decoding (atob, Buffer.from(…, 'base64'))",
    re: /(?<![.\w$])atob\s*\(|\bBuffer\.from\s*\([^)\n]*,\s*["']base64["']\s*\)/,
  },
  {
    id: "js_obfuscator_output",
    needles: ["_0x"],
    severity: "high",
    category: "obfuscation",
    scope: "code",
    langs: ["js"],
    ours: true,
    description: "output of a JavaScript obfuscator (_0x… identifiers): the code cannot be reviewed",
    re: /\b_0x[0-9a-f]{4,6}\b[^\n]*\b_0x[0-9a-f]{4,6}\b/,
  },
  {
    id: "module_name_built",
    needles: ["+"],
    severity: "critical",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "py"],
    adjust: "joined-module",
    ours: true,
    description:
      "a module name (child_process, vm, net, subprocess, socket, …) spelled by joining string pieces: hides " +
      "what is imported",
    re: /(["'`])[\w:.-]{0,24}\1(?:\s*\+\s*(["'`])[\w:.-]{0,24}\2)+/,
  },
  {
    id: "escaped_module_name",
    needles: ["\\x", "\\u"],
    severity: "critical",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "py"],
    ours: true,
    description: "an import or require whose module name is written with escape sequences: hides what is imported",
    re: new RegExp(
      String.raw`\b(?:require|import|__import__|` +
        String.raw`import_module)\s*\(\s*[rbuf]?["'` +
        "`" +
        String.raw`][^"'` +
        "`" +
        String.raw`\n]*?\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|` +
        String.raw`u\{[0-9a-fA-F]+\})|\bfrom\s+["'][^"'\n]*?\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|` +
        String.raw`u\{[0-9a-fA-F]+\})`,
    ),
  },
  {
    id: "vcs_folder_import",
    needles: [".git"],
    severity: "critical",
    category: "obfuscation",
    scope: "code",
    langs: ["js", "py"],
    ours: true,
    description:
      "code loaded from inside .git/, which is neither scanned nor hashed (git rewrites it), so what runs " +
      "there is never reviewed",
    re: new RegExp(
      String.raw`\b(?:require|import|__import__|import_module|run_path|spec_from_file_location|` +
        String.raw`load_source)\s*\([^)\n]*?["'` +
        "`" +
        String.raw`][^"'` +
        "`" +
        String.raw`\n]*?(?<=[/\\"'` +
        "`" +
        String.raw`])\.git[/\\]|\b(?:from|` +
        String.raw`import)\s+["'][^"'\n]*?(?<=[/\\"'])\.git[/\\]`,
    ),
  },
  {
    id: "string_reversal",
    needles: ["[::-1]", "reverse"],
    severity: "low",
    category: "obfuscation",
    scope: "code",
    description: "string reversal (possible hidden payload)",
    re: /\[::-1\]|\.split\(\s*["']{2}\s*\)\.reverse\(\)\.join\(/,
  },

  // ── Process execution ──────────────────────────────────────────────────────────────────────
  {
    id: "python_subprocess",
    needles: ["subprocess"],
    severity: "medium",
    category: "execution",
    scope: "code",
    langs: ["py"],
    description: "Python subprocess",
    re: /\bsubprocess\.(?:run|call|Popen|check_output|check_call|getoutput|getstatusoutput)\s*\(/,
  },
  {
    id: "python_shell_true",
    needles: ["shell"],
    severity: "high",
    category: "execution",
    scope: "code",
    langs: ["py"],
    ours: true,
    description: "Python subprocess with shell=True",
    re: /\bsubprocess\.\w+\s*\([^\n]*\bshell\s*=\s*True\b/,
  },
  {
    id: "python_os_system",
    needles: ["os."],
    severity: "high",
    category: "execution",
    scope: "code",
    langs: ["py"],
    description: "os.system / os.exec* (shell execution)",
    re: /\bos\.(?:system|exec[lv]p?e?|spawn[lv]p?e?)\s*\(/,
  },
  {
    id: "python_os_popen",
    needles: ["os.popen"],
    severity: "high",
    category: "execution",
    scope: "code",
    langs: ["py"],
    description: "os.popen (shell pipe)",
    re: /\bos\.popen\s*\(/,
  },
  {
    id: "node_child_process",
    needles: ["exec", "shell"],
    severity: "high",
    category: "execution",
    scope: "code",
    langs: ["js"],
    description: "child_process shell execution (exec, execSync, shell: true)",
    re: new RegExp(
      String.raw`\b(?:child_process|childProcess|cp)\.(?:exec|execSync)\s*\(|(?<![.\w$])(?:exec|` +
        String.raw`execSync)\s*\(\s*(?!\))|require\(\s*["'](?:node:)?child_process["']\s*\)\.(?:exec|` +
        String.raw`execSync)\b|\bshell\s*:\s*(?:true|["'` +
        "`" +
        String.raw`]\/)`,
    ),
    fileGuard: /\bchild_process\b/,
  },
  {
    id: "node_spawn",
    needles: ["spawn", "execfile", "fork", "execa", "$`"],
    severity: "medium",
    category: "execution",
    scope: "code",
    langs: ["js"],
    ours: true,
    description: "child_process spawn/execFile/fork, execa or zx (argument vector, no shell)",
    re: new RegExp(
      String.raw`\b(?:child_process|childProcess|cp)\.(?:spawn|spawnSync|execFile|execFileSync|fork)\s*\(|` +
        String.raw`(?<![.\w$])(?:spawn|spawnSync|execFile|execFileSync|fork|execa|execaSync|execaCommand|` +
        String.raw`execaCommandSync)\s*\(|(?<![\w$])\$` +
        "`",
    ),
    fileGuard: /\b(?:child_process|execa|zx|cross-spawn)\b/,
  },
  {
    id: "process_binding",
    needles: ["binding"],
    severity: "critical",
    category: "execution",
    scope: "code",
    langs: ["js"],
    ours: true,
    description:
      "process.binding / process._linkedBinding: Node's internal bindings (process spawning, file " +
      "descriptors) around the audited APIs",
    re: /\bprocess\s*(?:\.\s*|\[\s*["'`])(?:binding|_linkedBinding)\b/,
  },
  {
    id: "java_runtime_exec",
    needles: ["runtime"],
    severity: "high",
    category: "execution",
    scope: "code",
    description: "Java Runtime.exec",
    re: /\bRuntime\.getRuntime\(\)\.exec\s*\(/,
  },
  {
    id: "backtick_subshell",
    needles: ["$("],
    severity: "medium",
    category: "execution",
    scope: "code",
    description: "backtick string with command substitution",
    re: /`[^`\n]*\$\([^)\n]+\)[^`\n]*`/,
  },

  // ── Supply chain ───────────────────────────────────────────────────────────────────────────
  {
    id: "curl_pipe_shell",
    adjust: "command-mention",
    needles: ["curl"],
    severity: "high",
    guardSeverity: "critical",
    category: "supply_chain",
    scope: "code",
    description: "curl piped into a shell (download and run)",
    re: /\bcurl\b[^\n|]*\|\s*(?:sudo\s+)?(?:-\w+\s+)*(?:ba|z|da|k)?sh\b/,
  },
  {
    id: "exec_download_pipe_shell",
    needles: ["curl", "wget"],
    severity: "critical",
    category: "supply_chain",
    scope: "code",
    ours: true,
    description:
      "code that runs a download piped into a shell or interpreter (os.system, subprocess, exec, spawn …): " +
      "it executes whenever the plugin does",
    re: new RegExp(
      String.raw`\b(?:os\.system|os\.popen|subprocess\.\w+|Popen|execSync|exec|spawnSync|spawn|execa\w*|` +
        String.raw`system|popen|check_output|run|call)\s*\([^\n]*?\b(?:curl|wget)\b[^\n|` +
        String.raw`]*\|\s*(?:sudo\s+)?(?:-\w+\s+)*(?:(?:ba|z|da|k)?sh|python[23]?|node|perl|ruby)\b`,
    ),
  },
  {
    id: "install_script_download_exec",
    needles: ["curl", "wget"],
    severity: "critical",
    category: "supply_chain",
    scope: "code",
    files: /^package\.json$/,
    ours: true,
    description: "package.json install-time script that pipes a download into a shell (runs on npm install)",
    re: new RegExp(
      String.raw`"(?:preinstall|install|postinstall|prepare)"\s*:\s*"[^"\n]*\b(?:curl|wget)\b[^"\n|` +
        String.raw`]*\|\s*(?:sudo\s+)?(?:-\w+\s+)*(?:(?:ba|z|da|k)?sh|python[23]?|node|perl|ruby)\b`,
    ),
  },
  {
    id: "wget_pipe_shell",
    adjust: "command-mention",
    needles: ["wget"],
    severity: "critical",
    category: "supply_chain",
    scope: "code",
    description: "wget piped into a shell (download and run)",
    re: /\bwget\b[^\n|]*\|\s*(?:sudo\s+)?(?:-\w+\s+)*(?:ba|z|da|k)?sh\b/,
  },
  {
    id: "curl_pipe_python",
    adjust: "command-mention",
    needles: ["curl", "wget"],
    severity: "critical",
    category: "supply_chain",
    scope: "code",
    description: "download piped into an interpreter (python, node, perl, ruby)",
    re: /\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:python[23]?|node|perl|ruby|php)\b/,
  },
  {
    id: "remote_code_exec",
    needles: ["eval", "exec", "function", "vm.", "data:text/javascript"],
    severity: "critical",
    category: "supply_chain",
    scope: "code",
    ours: true,
    description: "runs code fetched over the network (eval/exec/Function of a response)",
    re: new RegExp(
      String.raw`(?:(?<![.\w$])(?:eval|exec)|\bnew\s+Function|\bvm\.run\w*)\s*\([^\n]*?\b(?:fetch|` +
        String.raw`requests\.get|urlopen|httpx\.get|axios\.get|got)\s*\(|` +
        String.raw`\bimport\s*\(\s*["'` +
        "`" +
        String.raw`]data:text\/javascript`,
    ),
  },
  {
    id: "remote_code_import",
    needles: ["http"],
    severity: "high",
    category: "supply_chain",
    scope: "code",
    langs: ["js", "py"],
    ours: true,
    description: "imports code from a URL at runtime (it is never scanned)",
    re: /\b(?:import|require)\s*\(\s*["'`]https?:\/\/|\bfrom\s+["']https?:\/\/|\bimport\s+["']https?:\/\//,
  },
  {
    id: "unpinned_pip_install",
    needles: ["pip"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    description: "pip install without a pinned version",
    re: /\bpip3?\s+install\s+(?!-r\b|--requirement\b|-e\s+\.|\.\s*$)(?![^\n]*==)[^\n]*[\w]/,
  },
  {
    id: "unpinned_npm_install",
    needles: ["npm", "npx"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    description: "npm install / npx -y of a package without a pinned version",
    re: new RegExp(
      String.raw`\bnpm\s+(?:install|i|add)\s+(?:-{1,2}[\w-]+\s+)*(?![^\n]*@\d)[a-z@][\w@./-]*|\bnpx\s+(?:-y|` +
        String.raw`--yes)\s+(?![^\n]*@\d)[a-z@][\w@./-]*`,
    ),
  },
  {
    id: "uv_run",
    needles: ["uv"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    description: "uv run / uvx (may install unpinned dependencies)",
    re: /\buv\s+run\s+|\buvx\s+\w/,
  },
  {
    id: "pep723_inline_deps",
    needles: ["dependencies"],
    severity: "medium",
    category: "supply_chain",
    scope: "any",
    langs: ["py"],
    description: "PEP 723 inline script dependencies (check pinning)",
    re: /^#\s*dependencies\s*=\s*\[/,
  },
  {
    id: "remote_fetch",
    needles: ["http"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    adjust: "loopback",
    description: "fetches a remote resource at runtime",
    re: new RegExp(
      String.raw`\b(?:curl|wget)\s+[^\n]*?https?:\/\/|(?<![\w$.])(?:fetch|axios\.get|got|requests\.get|` +
        String.raw`httpx\.get|urlopen)\s*\(\s*[rbuf]?["'` +
        "`" +
        String.raw`]https?:\/\/`,
    ),
  },
  {
    id: "git_clone",
    needles: ["clone"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    description: "clones a git repository at runtime",
    re: /\bgit\s+clone\s+/,
  },
  {
    id: "docker_pull",
    needles: ["docker"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    description: "pulls a container image at runtime",
    re: /\bdocker\s+pull\s+/,
  },
  {
    id: "install_script",
    needles: ["install", "prepare"],
    severity: "medium",
    category: "supply_chain",
    scope: "code",
    files: /^package\.json$/,
    ours: true,
    description: "package.json install-time script (runs on npm install)",
    re: /"(?:preinstall|install|postinstall|prepare)"\s*:\s*"/,
  },

  // ── Privilege escalation ───────────────────────────────────────────────────────────────────
  {
    id: "sudo_usage",
    needles: ["sudo"],
    severity: "high",
    category: "privilege_escalation",
    scope: "code",
    adjust: "command-mention",
    description: "runs a command with sudo",
    re: /(?:^|[\s;&|(`"'])sudo\s+(?!-[lkvV]\b)[\w/-]+/,
  },
  {
    id: "setuid_setgid",
    needles: ["setuid", "setgid", "setreuid", "setregid", "setresuid", "seteuid", "setegid"],
    severity: "critical",
    category: "privilege_escalation",
    scope: "code",
    description: "changes the process user or group (setuid/setgid)",
    re: /\b(?:setuid|setgid|setreuid|setregid|setresuid|seteuid|setegid)\s*\(|\bcap_setuid\b/,
  },
  {
    id: "nopasswd_sudo",
    needles: ["nopasswd"],
    severity: "critical",
    category: "privilege_escalation",
    scope: "code",
    description: "NOPASSWD sudoers entry",
    re: /\bNOPASSWD\s*:/,
  },
  {
    id: "suid_bit",
    needles: ["chmod"],
    severity: "critical",
    category: "privilege_escalation",
    scope: "code",
    description: "sets the SUID/SGID bit",
    re: new RegExp(
      String.raw`\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*s|[2467][0-7]{3})\b|` +
        String.raw`\bchmod(?:Sync)?\s*\([^)\n]*,\s*0o?[2467][0-7]{3}\s*\)`,
    ),
  },
  {
    id: "allowed_tools_field",
    needles: ["allowed-tools"],
    severity: "low",
    category: "privilege_escalation",
    scope: "any",
    description: "declares allowed-tools (skill frontmatter; informational)",
    re: /^allowed-tools\s*:/,
  },

  // ── Path traversal and escapes ─────────────────────────────────────────────────────────────
  {
    id: "path_traversal_deep",
    needles: [".."],
    severity: "high",
    category: "traversal",
    scope: "code",
    adjust: "relative-import",
    description: "deep relative path (three or more levels up)",
    re: /(?:\.\.[\\/]){3,}/,
  },
  {
    id: "path_traversal",
    needles: [".."],
    severity: "medium",
    category: "traversal",
    scope: "code",
    adjust: "relative-import",
    description: "relative path two levels up",
    re: /(?<!\.\.[\\/])(?:\.\.[\\/]){2}(?!\.\.[\\/])/,
  },
  {
    id: "system_passwd_access",
    needles: ["/etc/passwd", "/etc/shadow", "/etc/gshadow", "/etc/master.passwd"],
    severity: "critical",
    category: "traversal",
    scope: "code",
    description: "refers to the system password files",
    re: /\/etc\/(?:passwd|shadow|gshadow|master\.passwd)\b/,
  },
  {
    id: "proc_access",
    needles: ["/proc/"],
    severity: "high",
    category: "traversal",
    scope: "code",
    description: "reads another process or the environment/memory of one through /proc",
    re: new RegExp(
      String.raw`\/proc\/(?:self|thread-self|\d+|\$\{?\w+\}?)\/(?:environ|mem|maps|pagemap|root)\b|` +
        String.raw`\/proc\/kcore\b|\/proc\/\d+\/`,
    ),
  },
  {
    id: "dev_shm",
    needles: ["/dev/shm/"],
    severity: "medium",
    category: "traversal",
    scope: "code",
    description: "uses shared memory (a common staging area)",
    re: /\/dev\/shm\//,
  },
  {
    id: "symlink_escape",
    severity: "critical",
    category: "traversal",
    scope: "tree",
    description: "a symlink that resolves outside the plugin folder",
  },
  {
    id: "broken_symlink",
    severity: "medium",
    category: "traversal",
    scope: "tree",
    description: "a broken or circular symlink",
  },

  // ── Crypto mining ──────────────────────────────────────────────────────────────────────────
  {
    id: "crypto_mining",
    needles: [
      "xmrig",
      "xmr-stak",
      "cpuminer",
      "minerd",
      "cgminer",
      "bfgminer",
      "nbminer",
      "coinhive",
      "cryptonight",
      "stratum+",
    ],
    severity: "critical",
    category: "mining",
    scope: "code",
    description: "crypto miner or mining pool",
    re: new RegExp(
      String.raw`\b(?:xmrig|xmr-stak|cpuminer|minerd|cgminer|bfgminer|nbminer|coinhive|cryptonight)\b|` +
        String.raw`\bstratum\+(?:tcp|ssl|tls):\/\/`,
      "i",
    ),
  },
  {
    id: "mining_indicators",
    needles: ["hash", "monero", "mining", "nonce"],
    severity: "medium",
    category: "mining",
    scope: "code",
    description: "mining vocabulary (hash rate, mining pool, monero)",
    re: /\bhash[\s_-]?rate\b|\bmonero\b|\bmining[\s_-]pool\b|\bnonce\b[^\n]{0,40}\bdifficulty\b/i,
  },

  // ── Hardcoded secrets ──────────────────────────────────────────────────────────────────────
  {
    id: "hardcoded_secret",
    needles: ["key", "token", "secret", "passw"],
    severity: "critical",
    docSeverity: "high",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "a literal API key, token, secret or password",
    re: new RegExp(
      String.raw`\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret|` +
        String.raw`secret|password|passwd|token)["']?\s*[:=]\s*[rbuf]?["'` +
        "`" +
        String.raw`]([A-Za-z0-9+/=_\-.]{20,})["'` +
        "`" +
        String.raw`]`,
      "i",
    ),
  },
  {
    id: "embedded_private_key",
    needles: ["private key"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    description: "an embedded private key",
    re: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/,
  },
  {
    id: "github_token_leaked",
    needles: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "a GitHub token",
    re: /\b(gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,})\b/,
  },
  {
    id: "openai_key_leaked",
    needles: ["sk-"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "an OpenAI-style API key (sk-…)",
    re: /\b(sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})/,
  },
  {
    id: "anthropic_key_leaked",
    needles: ["sk-ant-"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "an Anthropic API key",
    re: /\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,})/,
  },
  {
    id: "aws_access_key_leaked",
    needles: ["akia", "asia"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "an AWS access key id",
    re: /\b((?:AKIA|ASIA)[0-9A-Z]{16})\b/,
  },
  {
    id: "gitlab_token_leaked",
    needles: ["glpat-"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    description: "a GitLab personal access token",
    re: /\b(glpat-[A-Za-z0-9_-]{20,})/,
  },
  {
    id: "slack_token_leaked",
    needles: ["xox"],
    severity: "critical",
    category: "credential_exposure",
    scope: "any",
    adjust: "secret-value",
    ours: true,
    description: "a Slack token",
    re: /\b(xox[abposr]-[A-Za-z0-9-]{10,})/,
  },

  // ── Prompt injection ───────────────────────────────────────────────────────────────────────
  {
    id: "prompt_injection_ignore",
    needles: ["ignore", "forget", "skip", "override"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "tells the agent to ignore its previous instructions",
    re: new RegExp(
      String.raw`\b(?:ignore|forget|skip|override)\s+(?:(?:all|any|every|the|your|of|these|those|my|` +
        String.raw`its)\s+){0,3}(?:previous|prior|above|earlier|preceding|existing|original|` +
        String.raw`system)\s+(?:instructions?|prompts?|directives?|rules|guidelines|messages)\b|` +
        String.raw`\bignore\s+all\s+(?:instructions|rules)\b`,
      "i",
    ),
  },
  {
    id: "sys_prompt_override",
    needles: ["system"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "claims to override the system prompt",
    re: /\bsystem\s+prompt\s+override\b|\boverride\s+(?:the\s+|your\s+)?system\s+prompt\b|\bnew\s+system\s+prompt\s*:/i,
  },
  {
    id: "disregard_rules",
    needles: ["disregard"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "tells the agent to disregard its rules",
    re: /\bdisregard\s+(?:\w+\s+){0,4}?(?:instructions|rules|guidelines|policies|safety\s+\w+)\b/i,
  },
  {
    id: "bypass_restrictions",
    needles: ["act"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "tells the agent to act as if it had no restrictions",
    re: new RegExp(
      String.raw`\bact\s+as\s+(?:if|though)\s+(?:\w+\s+){0,4}?(?:have|had|` +
        String.raw`has)\s+no\s+(?:\w+\s+){0,2}?(?:restrictions|limits|limitations|rules|guidelines|filters)\b|` +
        String.raw`\bact\s+as\s+(?:if|though)\s+(?:\w+\s+){0,4}?(?:don'?t|` +
        String.raw`do\s+not)\s+have\s+(?:\w+\s+){0,2}?(?:restrictions|limits|rules|guidelines)\b`,
      "i",
    ),
  },
  {
    id: "translate_execute",
    needles: ["translate"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "translate-then-execute evasion",
    re: /\btranslate\b[^\n]{1,80}\binto\b[^\n]{1,60}\band\s+(?:then\s+)?(?:execute|run|eval)\b/i,
  },
  {
    id: "remove_filters",
    needles: ["without"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "tells the agent to answer without safety filters",
    re: new RegExp(
      String.raw`\b(?:respond|answer|reply|` +
        String.raw`output)\s+(?:\w+\s+){0,3}?without\s+(?:\w+\s+){0,3}?(?:restrictions|limitations|filters|` +
        String.raw`filtering|safety|censorship)\b`,
      "i",
    ),
  },
  {
    id: "jailbreak_dan",
    needles: ["dan", "anything"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "DAN (Do Anything Now) jailbreak",
    re: /\bDAN\s+[Mm]ode\b|\b[Dd]o\s+[Aa]nything\s+[Nn]ow\b/,
  },
  {
    id: "jailbreak_dev_mode",
    needles: ["developer"],
    severity: "critical",
    category: "injection",
    scope: "prose",
    description: "developer-mode jailbreak",
    re: new RegExp(
      String.raw`\b(?:you\s+are|you're)\s+(?:now\s+)?(?:in|running\s+in)\s+developer\s+mode\b|` +
        String.raw`\bdeveloper\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|unlocked)[.,!:]?\s+(?:you|` +
        String.raw`your|ignore|there\s+are\s+no)\b`,
      "i",
    ),
  },
  {
    id: "role_hijack",
    needles: ["you"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "tells the agent it is now someone else",
    re: /\byou\s+are\s+(?:now|no\s+longer)\s+(?:a|an|the|my|no|DAN|unrestricted|free|jailbroken|evil|bound)\b/i,
  },
  {
    id: "role_pretend",
    needles: ["pretend"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "asks the agent to pretend to be someone else",
    re: /\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b/i,
  },
  {
    id: "deception_hide",
    needles: ["tell", "inform", "notify", "alert"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "tells the agent to hide something from the user",
    re: new RegExp(
      String.raw`\b(?:do\s+not|don'?t|never)\s+(?:\w+\s+){0,3}?(?:tell|inform|notify|` +
        String.raw`alert)\s+(?:\w+\s+){0,2}?the\s+user\b(?![^\n]*\b(?:unless|except|until|confirm|diagnos|` +
        String.raw`verify|check|ask|before)\w*)`,
      "i",
    ),
  },
  {
    id: "leak_system_prompt",
    needles: ["prompt", "instructions"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "asks the agent to reveal its system prompt",
    re: new RegExp(
      String.raw`\b(?:output|print|reveal|repeat|show|display|leak|dump)\s+(?:\w+\s+){0,3}?(?:system|initial|` +
        String.raw`original|hidden)\s+(?:prompt|instructions)\b`,
      "i",
    ),
  },
  {
    id: "conditional_deception",
    needles: ["watching", "looking", "monitoring"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "behave differently when unobserved",
    re: new RegExp(
      String.raw`\b(?:when|if|while)\s+no\s*(?:one|body)\s+is\s+(?:watching|looking|monitoring)\b|` +
        String.raw`\bwhen\s+(?:the\s+)?user\s+(?:is\s+)?not\s+(?:watching|looking)\b`,
      "i",
    ),
  },
  {
    id: "html_comment_injection",
    needles: ["<!--"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "instructions hidden in an HTML comment",
    re: new RegExp(
      String.raw`<!--(?:(?!-->)[^\n]){0,300}?(?:\b(?:ignore|override|` +
        String.raw`disregard)\b[^\n]{0,80}?\b(?:instructions?|rules|prompt)\b|\bsecretly\b|\bdo\s+not\s+tell\b|` +
        String.raw`\byou\s+(?:must|are)\b|\b(?:assistant|system)\s*:|\bhidden\s+instructions?\b)`,
      "i",
    ),
  },
  {
    id: "hidden_div",
    needles: ["style"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "HTML element hidden from the reader",
    re: new RegExp(
      String.raw`<(?:div|span|p|section)\b[^>\n]*style\s*=\s*["'][^"'\n]*(?:display\s*:\s*none|` +
        String.raw`visibility\s*:\s*hidden|font-size\s*:\s*0(?:px)?\b|opacity\s*:\s*0(?:\.0+)?\b)`,
      "i",
    ),
  },
  {
    id: "hypothetical_bypass",
    needles: ["hypothetical"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "hypothetical framing used to bypass rules",
    re: new RegExp(
      String.raw`\bhypothetical(?:ly)?\b[^\n]{0,60}\b(?:ignore|bypass|override)\b|` +
        String.raw`\bhypothetical(?:ly)?\b[^\n]{0,60}\bno\s+(?:rules|restrictions)\b`,
      "i",
    ),
  },
  {
    id: "fake_update",
    needles: ["been"],
    severity: "high",
    category: "injection",
    scope: "prose",
    description: "fake announcement that the agent was updated",
    re: /\byou\s+have\s+been\s+(?:\w+\s+){0,2}?(?:updated|upgraded|patched|reprogrammed)\s+(?:to|with)\b/i,
  },
  {
    id: "invisible_unicode",
    severity: "high",
    category: "injection",
    scope: "any",
    adjust: "invisible",
    description: "invisible or bidirectional-control Unicode character",
    re: new RegExp(INVISIBLE, "u"),
  },
  {
    id: "educational_pretext",
    needles: ["educational"],
    severity: "medium",
    category: "injection",
    scope: "prose",
    description: "educational pretext",
    re: /\bfor\s+(?:purely\s+)?educational\s+purposes?\s+only\b/i,
  },
  {
    id: "fake_policy",
    needles: ["policy", "policies", "guidelines", "instructions", "directives"],
    severity: "medium",
    category: "injection",
    scope: "prose",
    notInCode: true,
    description: "claims a new policy that overrides the agent's",
    re: new RegExp(
      String.raw`\b(?:new|updated|revised)\s+(?:\w+\s+){0,2}?(?:policy|policies|guidelines|instructions|` +
        String.raw`directives)\s*(?::|\b(?:override|overrides|supersede|supersedes|replace|replaces|` +
        String.raw`take\s+precedence))`,
      "i",
    ),
  },

  // ── Structure of the file tree ─────────────────────────────────────────────────────────────
  {
    id: "binary_file",
    severity: "high",
    guardSeverity: "critical",
    category: "structural",
    scope: "tree",
    description: "an executable binary or native module (cannot be reviewed)",
  },
  {
    id: "oversized_file",
    severity: "medium",
    category: "structural",
    scope: "tree",
    description: "a file too large to scan (high when it is code that runs)",
  },
  {
    id: "too_many_files",
    severity: "medium",
    category: "structural",
    scope: "tree",
    description: "more files than a plugin usually has",
  },
  {
    id: "oversized_bundle",
    severity: "medium",
    category: "structural",
    scope: "tree",
    description: "the plugin is larger than a plugin usually is",
  },
  {
    id: "scan_truncated",
    severity: "high",
    category: "structural",
    scope: "tree",
    ours: true,
    description: "the scan stopped at a limit: some files that ship were not scanned",
  },
  {
    id: "unreadable_path",
    severity: "medium",
    category: "structural",
    scope: "tree",
    ours: true,
    description: "a file or folder could not be read",
  },
  {
    id: "test_tree_imported",
    severity: "low",
    category: "structural",
    scope: "tree",
    ours: true,
    description: "runtime code imports a test folder or test file, so it is scanned as runtime code",
  },
] as const satisfies readonly PatternSpec[];

export type PatternId = (typeof SCAN_PATTERNS)[number]["id"];

const BY_ID: ReadonlyMap<string, PatternSpec> = new Map(SCAN_PATTERNS.map((p) => [p.id, p as PatternSpec]));

export function patternById(id: string): PatternSpec | undefined {
  return BY_ID.get(id);
}

export function isPatternId(id: string): id is PatternId {
  return BY_ID.has(id);
}

/** The rows the line matcher runs (structural rows have no regex). */
export const CONTENT_PATTERNS: readonly PatternSpec[] = SCAN_PATTERNS.filter(
  (p) => "re" in p && p.re !== undefined,
) as readonly PatternSpec[];
