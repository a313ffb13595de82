import { Command, Option } from "../commander.js";
import { resolveHome } from "../../core/paths.js";
import type { VerifyMode } from "../../app/start-runtime.js";
import type { GlobalOptions } from "../context.js";
import { HermesError } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import { err, json, out, style } from "../output.js";

export const verifyOption = () =>
  new Option("--verify <mode>", "how startup re-checks the lock: full, fast or off")
    .choices(["full", "fast", "off"])
    .default("fast");

/** `hermes plugins chain [kind]`: every hook and middleware chain in the order it runs, with owners. */
export function chainCommand(): Command {
  return new Command("chain")
    .description("start the runtime and print each hook and middleware chain in order, with owning plugins")
    .argument("[kind]", "one hook name or middleware kind")
    .addOption(verifyOption())
    .option("--json", "print as JSON")
    .action(async (kind: string | undefined, o: { verify: VerifyMode; json?: boolean }, cmd: Command) => {
      const { HOOK_NAMES, isHookName, isMiddlewareKind, MIDDLEWARE_KINDS } = await import(
        "../../contracts/hook-catalog.js"
      );
      // A mistyped kind would print an empty chain with exit 0.
      if (kind !== undefined && !isHookName(kind) && !isMiddlewareKind(kind)) {
        throw new HermesError("E_USAGE", {
          message:
            `'${kind}' is neither a hook name nor a middleware ` +
            `kind${didYouMean(kind, [...HOOK_NAMES, ...MIDDLEWARE_KINDS])}`,
          hint: `run \`hermes plugins chain\` for every chain; middleware kinds: ${MIDDLEWARE_KINDS.join(", ")}`,
        });
      }
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const { openRuntime } = await import("../../app/open-runtime.js");
      const rt = await openRuntime({
        home: resolveHome({ home: g.home, profile: g.profile }),
        verify: o.verify,
        mustExist: true,
        warn: err,
      });
      const hooks = Object.fromEntries(rt.hooks.names().map((n) => [n, rt.hooks.owners(n)]));
      const middleware = Object.fromEntries(MIDDLEWARE_KINDS.map((k) => [k, rt.middleware.owners(k)]));
      const pick = <T extends Record<string, string[]>>(m: T) =>
        kind ? Object.fromEntries(Object.entries(m).filter(([k]) => k === kind)) : m;
      const data = {
        load_order: rt.lock.load_order,
        hooks: pick(hooks),
        middleware: pick(middleware),
        issues: rt.orderIssues,
      };
      if (o.json) return json(data);
      out(`${style.bold("load order")}: ${rt.lock.load_order.join(" → ") || "(no plugins load)"}`);
      for (const [section, chains] of [
        ["middleware", data.middleware],
        ["hooks", data.hooks],
      ] as const) {
        const rows = Object.entries(chains);
        if (!rows.length) continue;
        out(style.bold(section));
        for (const [name, owners] of rows) {
          const marked = owners.map((o2) =>
            rt.orderIssues.some((i) => i.plugin === o2 && i.name === name)
              ? `${o2} ${style.yellow("(no slot in lock)")}`
              : o2,
          );
          out(`  ${name}: ${marked.join(" → ") || style.dim("(none)")}`);
        }
      }
      for (const i of rt.orderIssues) out(style.yellow(`! ${i.message}`));
    });
}
