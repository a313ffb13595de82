// The middleware seed's "tool request middleware" example, in JavaScript.
// It runs before pre_tool_call hooks, guardrails and approvals, so everything
// downstream sees the rewritten workdir.
//
// The seed uses ~/.hermes/cache/scratch/hermes-middleware-demo; this port uses the
// same folder under the active home ($HERMES_HOME, ~/.hermes by default), so a
// throwaway home (hermes demo) keeps its scratch folder to itself.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export function register(ctx) {
  const scratch = join(ctx.home, "cache", "scratch", "hermes-middleware-demo");

  ctx.register_middleware("tool_request", function normalize_terminal_workdir(kwargs) {
    if (kwargs.tool_name !== "terminal") return null;
    const args = { ...kwargs.args };
    if (args.workdir === undefined || args.workdir === null || args.workdir === "") {
      mkdirSync(scratch, { recursive: true });
      args.workdir = scratch;
    }
    return {
      args,
      source: "middleware-demo",
      reason: "defaulted terminal workdir",
    };
  });
}
