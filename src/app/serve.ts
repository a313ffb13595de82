import { hashTree } from "../compile/tree-hash.js";
import { unwatchFile, watchFile } from "node:fs";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import type { Logger } from "pino";
import { loadConfig } from "../config/config-file.js";
import { currentGeneration, listGenerationNumbers, readGeneration } from "../compile/generations.js";
import { lockChecksum, type Lock } from "../contracts/lock.js";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths, type HomePaths } from "../core/paths.js";
import type { ProviderFlags } from "../agent/providers/resolve.js";
import type { LoadedGeneration } from "../gateway/generation.js";
import { buildServer } from "../gateway/http/server.js";
import { GatewayService } from "../gateway/service.js";
import { gatewaySettings, isLoopback } from "../gateway/settings.js";
import { SqliteSessionStore } from "../gateway/sqlite-session-store.js";
import { recoverPluginsDir } from "./recover.js";
import { startAgentRuntime } from "./start-agent.js";

export interface ServeOptions {
  home: string;
  host?: string;
  port?: number;
  /** Reload when hermes.lock.json changes (a new generation was compiled). */
  watch?: boolean;
  flags?: ProviderFlags;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  warn?: (line: string) => void;
}

export interface ServeHandle {
  url: string;
  generation: number;
  plugins: number;
  service: GatewayService;
  /** Load the current generation beside the serving one (SIGHUP). */
  reload(): Promise<void>;
  /** Stop gracefully (SIGTERM): turns in flight finish within the grace period. */
  stop(): Promise<void>;
}

/**
 * The key resent conversations' session ids are derived with: random, kept beside the sessions so ids
 * survive a restart, never derivable by a client.
 */
async function deriveSecret(home: string): Promise<Uint8Array> {
  const file = join(dirname(sessionsFile(home)), "derive.key");
  const have = await readFile(file).catch(() => undefined);
  if (have?.length === 32) return have;
  const fresh = randomBytes(32);
  await writeFileAtomic(file, fresh, { mode: 0o600 });
  return fresh;
}

/**
 * The generation whose lock a runtime runs: a compile may switch `current` while a load is under way,
 * so the number is looked up by the lock's checksum (current first, then the newest ones).
 */
async function generationOf(paths: HomePaths, lock: Lock): Promise<number> {
  const current = await currentGeneration(paths);
  const want = lockChecksum(lock);
  const recent = (await listGenerationNumbers(paths)).sort((a, b) => b - a).slice(0, 5);
  for (const n of [...(current !== undefined ? [current] : []), ...recent]) {
    const g = await readGeneration(paths, n).catch(() => undefined);
    if (g && lockChecksum(g.lock) === want) return n;
  }
  return current ?? 0;
}

/** Where hermes serve keeps its sessions. */
export function sessionsFile(home: string): string {
  return join(homePaths(home).home, "sessions", "sessions.db");
}

/**
 * `hermes serve`: load the home's current generation through the same lock-driven start as chat
 * (every plugin loaded), then listen. Refuses to listen beyond loopback without API_SERVER_KEY.
 */
export async function startServe(o: ServeOptions): Promise<ServeHandle> {
  const env = o.env ?? process.env;
  const log = o.log ?? logger();
  const paths = homePaths(o.home);
  const settings = { ...gatewaySettings((await loadConfig(paths.config)).value) };
  if (o.host !== undefined) settings.host = o.host;
  if (o.port !== undefined) settings.port = o.port;
  const apiKey = env.API_SERVER_KEY?.trim() || undefined;
  if (!apiKey && !isLoopback(settings.host))
    throw new HermesError("E_SERVE_KEY_REQUIRED", {
      message: `hermes serve would listen on ${settings.host}, beyond this machine, without API_SERVER_KEY`,
    });
  await recoverPluginsDir(paths, o.warn ?? ((l) => log.warn(l)));
  const load = async (): Promise<LoadedGeneration> => {
    const base = await startAgentRuntime({ home: paths.home, ...(o.flags ? { flags: o.flags } : {}), env, log });
    return { ...base, generation: await generationOf(paths, base.runtime.lock) };
  };
  const store = SqliteSessionStore.open(sessionsFile(paths.home));
  let service: GatewayService;
  try {
    const treeIntegrity = async (dir: string) => (await hashTree(dir)).integrity;
    service = await GatewayService.start({ store, load, settings, log, env, treeIntegrity });
  } catch (e) {
    store.close();
    throw e;
  }
  const app = buildServer(service, {
    ...(apiKey ? { apiKey } : {}),
    keepAliveSeconds: settings.keepAliveSeconds,
    deriveSecret: await deriveSecret(paths.home),
  });
  try {
    await app.listen({ host: settings.host, port: settings.port });
  } catch (e) {
    await service.stop();
    throw new HermesError("E_SERVE_LISTEN", {
      message: `cannot listen on ${settings.host}:${settings.port}: ${(e as Error).message}`,
    });
  }
  const addr = app.server.address();
  const port = addr && typeof addr === "object" ? addr.port : settings.port;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  const lockFile = paths.lock;
  const onLockChange = () => void handle.reload();
  if (o.watch) watchFile(lockFile, { interval: 500 }, onLockChange);
  let stopping: Promise<void> | undefined;
  const handle: ServeHandle = {
    url: `http://${host}:${port}`,
    generation: service.generation,
    plugins: service.runtime.loadedPlugins().length,
    service,
    async reload() {
      const r = await service.reload();
      if (r.ok) log.info(`generation ${r.generation} serves new turns`);
    },
    stop() {
      stopping ??= (async () => {
        if (o.watch) unwatchFile(lockFile, onLockChange);
        const closing = app.close();
        await service.stop();
        app.server.closeAllConnections();
        await closing;
      })();
      return stopping;
    },
  };
  return handle;
}
