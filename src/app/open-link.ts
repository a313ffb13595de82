import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { parseMcpServers } from "../agent/mcp/config.js";
import { editConfig, loadConfig } from "../config/config-file.js";
import type { Io } from "../consent/flow.js";
import { HermesError } from "../core/errors.js";
import type { HomePaths } from "../core/paths.js";
import { candidateFromFolder } from "../discovery/scan.js";
import { cloneInto } from "../install/checkout.js";
import { parseDeepLink, shownLink, type DeepLink } from "../install/deep-link.js";
import { parseIdentifier } from "../install/identifier.js";
import type { InstallResult } from "../install/install.js";
import { createStage, discardStage } from "../install/stage.js";
import { findManifestFile } from "../manifest/parse.js";
import { installIntoHome } from "./install-plugin.js";
import { ownershipGuard } from "./plugin-state.js";

/*
 * `hermes open-url <link>` and `hermes plugins install <link>`: show what a hermes:// link asks for,
 * look at the repository in staging, and only after a person confirmed on a terminal run the normal
 * install (scan, consent, lock) or the config edit. Nothing is installed or written before that.
 */

export interface OpenLinkOptions {
  paths: HomePaths;
  link: string;
  io: Io;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags given beside the link (`plugins install <link> --force …`). */
  force?: boolean;
  enable?: boolean;
  ref?: string;
  grants?: string[];
}

export type OpenLinkResult =
  | { kind: "plugin"; repo: string; desktop: boolean; install: InstallResult }
  | { kind: "mcp"; name: string };

type PluginLink = Extract<DeepLink, { kind: "plugin" }>;
type McpLink = Extract<DeepLink, { kind: "mcp" }>;

/** What a repository holds: an agent plugin (plugin.yaml at the top) and/or a Hermes desktop plugin. */
interface Contents {
  agent?: string;
  desktop?: string;
}

const exists = (p: string) =>
  fsp.lstat(p).then(
    (s) => s.isFile(),
    () => false,
  );

async function detect(dir: string): Promise<Contents> {
  const out: Contents = {};
  if (findManifestFile(dir)) {
    const cand = await candidateFromFolder(dir, "user", { dirName: "plugin" });
    out.agent = cand?.name ?? "plugin";
  }
  // A unified package keeps its desktop half in desktop/; a desktop-only repository has plugin.js on top.
  if (await exists(join(dir, "desktop", "plugin.js"))) out.desktop = "desktop/plugin.js";
  else if (!out.agent && (await exists(join(dir, "plugin.js")))) out.desktop = "plugin.js";
  return out;
}

function installCommandOf(l: PluginLink, o: OpenLinkOptions): string {
  const flags = [l.enable || o.enable ? " --enable" : "", l.force || o.force ? " --force" : ""].join("");
  return `hermes plugins install ${l.owner}/${l.repo}${flags}`;
}

function showPluginLink(io: Io, l: PluginLink, o: OpenLinkOptions): void {
  const web = `https://github.com/${l.owner}/${l.repo}`;
  io.out(`Install link: ${l.owner}/${l.repo}`);
  io.out(`  Repository: ${l.owner}/${l.repo}`);
  io.out("  Before you install: a plugin is code that runs inside your agent with your permissions. The security");
  io.out("  scan is not an audit. Install only from authors you trust, and look at the code first:");
  io.out(`    ${web}`);
  io.out(`    git clone ${web}.git`);
  const opts = [
    l.enable || o.enable ? "enable it after installing" : "",
    l.force || o.force ? "replace an existing install" : "",
  ];
  if (opts.some(Boolean)) io.out(`  The link also asks to: ${opts.filter(Boolean).join("; ")}`);
}

async function previewRepo(o: OpenLinkOptions, url: string, label: string): Promise<Contents> {
  o.io.out(`Cloning ${label} (shallow) into staging to see what it holds...`);
  const stage = await createStage(o.paths, "install", "");
  try {
    await cloneInto(stage.dir, "preview", { url, env: o.env });
    return await detect(join(stage.dir, "preview"));
  } finally {
    await discardStage(stage).catch(() => undefined);
  }
}

async function openPluginLink(o: OpenLinkOptions, l: PluginLink): Promise<OpenLinkResult> {
  const { io } = o;
  const label = `${l.owner}/${l.repo}`;
  if (!io.interactive) {
    throw new HermesError("E_DEEPLINK_NOT_INTERACTIVE", {
      message: `the install link for ${label} needs a terminal to confirm it; nothing was installed`,
      hint: `to install it without the link, run: ${installCommandOf(l, o)}`,
    });
  }
  showPluginLink(io, l, o);
  if (!(await io.confirm(`Clone ${label} to look at what it holds? [y/N] `))) {
    throw new HermesError("E_DEEPLINK_ABORTED", { message: `${label} was not cloned; nothing was installed` });
  }
  const id = parseIdentifier(label);
  if (id.kind !== "git") throw new HermesError("E_DEEPLINK_INVALID", { message: `'${label}' is not owner/repo` });
  const found = await previewRepo(o, id.url, label);
  if (found.agent) io.out(`  Agent plugin: '${found.agent}' (plugin.yaml) — hermes-kit installs this part`);
  if (found.desktop) {
    io.out(`  Desktop plugin: ${found.desktop} — this part is for the Hermes desktop app; hermes-kit does not`);
    io.out("  install or run desktop plugins");
  }
  if (!found.agent) {
    throw new HermesError("E_DEEPLINK_NO_AGENT_PLUGIN", {
      message:
        `${label} holds ${found.desktop ? "only a desktop plugin" : "no plugin.yaml at its top"}; ` +
        "nothing was installed",
    });
  }
  if (!(await io.confirm(`Install the agent plugin '${found.agent}' from ${label}? [y/N] `))) {
    throw new HermesError("E_DEEPLINK_ABORTED", { message: `${label} was not installed` });
  }
  const enable = l.enable || o.enable ? true : o.enable;
  const install = await installIntoHome({
    paths: o.paths,
    identifier: label,
    ref: o.ref,
    force: l.force || o.force,
    enable,
    grants: o.grants ?? [],
    io,
    env: o.env,
  });
  return { kind: "plugin", repo: label, desktop: Boolean(found.desktop), install };
}

function mcpYaml(l: McpLink): string {
  return stringify({ mcp_servers: { [l.name]: l.config } }, { lineWidth: 0 }).replace(/\n$/, "");
}

/** The settings must be an entry hermes-kit runs as given: anything its MCP parser skips or ignores refuses them. */
function checkMcpConfig(o: OpenLinkOptions, l: McpLink): void {
  // Every ${VAR} counts as set: a secret the link leaves to the environment is not a problem of the link.
  const env = new Proxy({}, { get: (_t, k) => (typeof k === "string" ? "set" : undefined) }) as NodeJS.ProcessEnv;
  const parsed = parseMcpServers({ mcp_servers: { [l.name]: l.config } }, { baseDir: o.paths.home, env });
  const errors = parsed.diagnostics;
  if (errors.length || parsed.servers.length !== 1) {
    throw new HermesError("E_DEEPLINK_MCP_INVALID", {
      message: `the settings of MCP server '${l.name}' in the link are not valid; nothing was written`,
      diagnostics: errors,
    });
  }
}

function mcpExists(config: Record<string, unknown>, name: string): boolean {
  const servers = config.mcp_servers;
  return servers !== null && typeof servers === "object" && Object.hasOwn(servers, name);
}

async function openMcpLink(o: OpenLinkOptions, l: McpLink): Promise<OpenLinkResult> {
  const { io, paths } = o;
  checkMcpConfig(o, l);
  if (!io.interactive) {
    throw new HermesError("E_DEEPLINK_NOT_INTERACTIVE", {
      message:
        `the link to add MCP server '${l.name}' needs a terminal to confirm it; nothing was written. To add it ` +
        `by hand, put this in ${paths.config}:\n${mcpYaml(l)}`,
    });
  }
  const exists = () => new HermesError("E_DEEPLINK_MCP_EXISTS", { message: `mcp_servers.${l.name} already exists` });
  if (mcpExists((await loadConfig(paths.config)).value, l.name)) throw exists();
  (await ownershipGuard(paths))(["mcp_servers", l.name]);
  io.out(`Add MCP server link: '${l.name}'`);
  io.out("  It adds to config.yaml:");
  for (const line of mcpYaml(l).split("\n")) io.out(`    ${line}`);
  if (typeof l.config.command === "string") {
    io.out("  Caution: this server runs a local command on your machine with your permissions, every time the");
    io.out("  agent starts. Add it only if you trust where the link came from.");
  }
  if (!(await io.confirm(`Add MCP server '${l.name}' to ${paths.config}? [y/N] `))) {
    throw new HermesError("E_DEEPLINK_ABORTED", { message: `MCP server '${l.name}' was not added` });
  }
  await editConfig(paths.config, (cur) => {
    if (mcpExists(cur.value, l.name)) throw exists();
    return [{ op: "set", path: ["mcp_servers", l.name], value: l.config }];
  });
  io.out(`Added mcp_servers.${l.name} to ${paths.config}; it starts with the next agent session.`);
  return { kind: "mcp", name: l.name };
}

/** Parse the link, then run its flow: a plugin install or an MCP server added to config.yaml. */
export async function openLink(o: OpenLinkOptions): Promise<OpenLinkResult> {
  const l = parseDeepLink(o.link);
  if (l.kind === "plugin") return openPluginLink(o, l);
  if (o.force || o.enable !== undefined || o.ref !== undefined || o.grants?.length) {
    throw new HermesError("E_DEEPLINK_INVALID", {
      message: `install options do not apply to an MCP link (${shownLink(o.link)})`,
    });
  }
  return openMcpLink(o, l);
}
