/**
 * The lock is the order. A plugin that registers into a chain its manifest did not declare (so the
 * lock has no slot for it) fails to load in a managed home, and `plugins why` says why; in an
 * unmanaged home it loads with a warning and is marked in `plugins chain`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli, STACK_RE } from "../support/cli.js";
import { Scratch, writePlugin } from "../support/home.js";

const scratch = new Scratch("hermes-e2e-lock-order-");
afterAll(() => scratch.cleanup());

function home(): { cli: (...args: string[]) => ReturnType<typeof runCli> } {
  const root = scratch.dir("case");
  const h = join(root, "home");
  const bundled = scratch.dir("bundled");
  writePlugin(join(h, "plugins", "sneaky"), {
    manifest: "name: sneaky\nversion: '1'\nprovides_hooks: [post_tool_call]\n",
    entry: false,
  });
  writeFileSync(
    join(h, "plugins", "sneaky", "index.js"),
    'export function register(ctx) { ctx.register_hook("post_tool_call", () => {}); ' +
      'ctx.register_hook("pre_tool_call", () => {}); }\n',
  );
  writePlugin(join(h, "plugins", "honest"), "name: honest\nversion: '1'\n");
  writeFileSync(join(h, "config.yaml"), "plugins:\n  enabled: [sneaky, honest]\n");
  return { cli: (...args: string[]) => runCli(["--home", h, ...args], { env: { HERMES_BUNDLED_PLUGINS: bundled } }) };
}

it("managed: a registration the lock did not record fails that plugin, the others load, why says so", async () => {
  const t = home();
  expect((await t.cli("compile", "--managed", "nixos")).code).toBe(0);
  const chain = await t.cli("plugins", "chain", "--json");
  expect(chain.stderr).not.toMatch(STACK_RE);
  const why = await t.cli("plugins", "why", "sneaky");
  expect(why.stdout + why.stderr).toContain("registered hook 'pre_tool_call' without an order slot in the lock");
  expect(why.stdout + why.stderr).toContain("nixos-managed home the lock is the order");
  const status = JSON.parse(chain.stdout) as { hooks: Record<string, Array<unknown>> };
  expect(JSON.stringify(status.hooks)).not.toContain("sneaky");
  const honest = await t.cli("plugins", "why", "honest");
  expect(honest.stdout).toMatch(/loaded/);
});

it("unmanaged: it loads with a warning and plugins chain marks the slot the lock lacks", async () => {
  const t = home();
  expect((await t.cli("compile")).code).toBe(0);
  const chain = await t.cli("plugins", "chain");
  expect(chain.code, chain.stderr).toBe(0);
  expect(chain.stdout).toContain("sneaky (no slot in lock)");
});
