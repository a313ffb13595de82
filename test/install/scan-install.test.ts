import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundledWithHelloWorld, Scratch } from "../support/home.js";
import { hermes, newHome, type Ctx } from "./helpers.js";

let s: Scratch;
let ctx: Ctx;

beforeAll(() => {
  s = new Scratch("hermes-scan-install-");
  ctx = { s, bundled: bundledWithHelloWorld(s) };
});

afterAll(() => s?.cleanup());

function folder(name: string, index: string): string {
  const dir = s.dir(`src-${name}`);
  writeFileSync(join(dir, "plugin.yaml"), `name: ${name}\nversion: 1.0.0\nhooks: [pre_tool_call]\n`);
  writeFileSync(join(dir, "index.js"), index);
  return dir;
}

describe.concurrent("the install-time scan, without a terminal", { timeout: 120_000 }, () => {
  it(
    'the docs\' pre_tool_call example (message: "no sudo here") installs: a string that names sudo is ' +
      "informational, not sudo usage",
    async () => {
      const dir = folder(
        "guard",
        'export function register(ctx) {\n  ctx.register_hook("pre_tool_call", ({ tool_name, args }) => {\n    ' +
          'if (tool_name === "terminal" && args.command?.startsWith("sudo")) return { action: "block", message: ' +
          '"no sudo here" };\n  });\n}\n',
      );
      const h = newHome(s, "docs-example");
      const r = await hermes(ctx, h, ["install", dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("Security scan: guard: safe");
      expect(r.stderr).not.toContain("caution");
    },
  );

  it("E_INSTALL_SCAN_CAUTION names a file that exists (the blocked tree is kept for review)", async () => {
    const dir = folder("needs-root", 'const cmd = "sudo systemctl restart nginx";\nexport function register(ctx) {}\n');
    const h = newHome(s, "caution");
    const r = await hermes(ctx, h, ["install", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("E_INSTALL_SCAN_CAUTION");
    const m = /E_INSTALL_SCAN_CAUTION (\S+?):(\d+):\d+/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    expect(existsSync(m![1]!), m![1]).toBe(true);
    expect(m![1]!.startsWith(join(h.home, "cache", "scan-review"))).toBe(true);
    expect(existsSync(join(h.plugins, "needs-root"))).toBe(false);
  });
});
