import { unwatchFile, watchFile } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { loadConfig } from "../config/config-file.js";
import { currentGeneration } from "../compile/generations.js";
import { HermesError } from "../core/errors.js";
import { logger } from "../core/log.js";
import { homePaths } from "../core/paths.js";
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
    return { ...base, generation: (await currentGeneration(paths)) ?? 0 };
  };
  const store = SqliteSessionStore.open(sessionsFile(paths.home));
  let service: GatewayService;
  try {
    service = await GatewayService.start({ store, load, settings, log, env });
  } catch (e) {
    store.close();
    throw e;
  }
  const app = buildServer(service, { ...(apiKey ? { apiKey } : {}), keepAliveSeconds: settings.keepAliveSeconds });
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
