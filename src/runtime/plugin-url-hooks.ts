/**
 * Module resolve hooks, registered once a process runs a second runtime (hermes serve reloading): a
 * file a plugin imports gets its importer's `?v=` query, so each generation evaluates the plugin's own
 * files afresh. Packages (node_modules) and hermes-kit's own files keep one instance per process.
 */
let kitRoot = "";

const VERSION = /[?&](v=[0-9a-f]{1,12}\.\d+\.\d+)$/;

export function initialize(data: { kitRoot: string }): void {
  kitRoot = new URL(`file://${data.kitRoot.endsWith("/") ? data.kitRoot : `${data.kitRoot}/`}`).href;
}

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}

export async function resolve(
  specifier: string,
  context: { parentURL?: string },
  next: (specifier: string, context: { parentURL?: string }) => Promise<ResolveResult>,
): Promise<ResolveResult> {
  const r = await next(specifier, context);
  const v = context.parentURL ? VERSION.exec(context.parentURL)?.[1] : undefined;
  if (!v || !r.url.startsWith("file:") || r.url.includes("?")) return r;
  if (r.url.includes("/node_modules/") || (kitRoot && r.url.startsWith(kitRoot))) return r;
  return { ...r, url: `${r.url}?${v}` };
}
