import { describe, expect, it } from "vitest";
import { HermesError } from "../../src/core/errors.js";
import { mediaTools } from "../../src/agent/tools/media.js";
import { runOnBackend, terminalBackendName, type BackendCommand } from "../../src/agent/tools/terminal-backend.js";
import { providerShapeProblem } from "../../src/runtime/provider-shapes.js";
import { ProviderRegistry, type ProviderKind } from "../../src/runtime/registries.js";

/**
 * The provider-backed built-in tools in-process, on a real provider registry: what the end-to-end
 * tests (test/e2e/agent-providers.test.ts) cannot reach cheaply — timeouts, interrupts and providers
 * that fail in every way a plugin can.
 */
function registry(kind: ProviderKind, name: string, provider: unknown): ProviderRegistry {
  const r = new ProviderRegistry();
  r.map(kind).lease(name, { kind, name, provider, plugin_key: "test" });
  return r;
}

const tick = () => new Promise((r) => setImmediate(r));

function cmd(over: Partial<BackendCommand> = {}): BackendCommand {
  return { command: "echo hi", workdir: null, timeoutS: 30, signal: undefined, task_id: "t1", ...over };
}

/** An environment that records its life and answers with `answer` (a function of the execute options). */
function recordingBackend(answer: (opts: { signal: AbortSignal }) => unknown) {
  const seen: string[] = [];
  let signal: AbortSignal | undefined;
  const provider = {
    name: "box",
    create_environment: () => {
      seen.push("create");
      return {
        execute: (_c: string, opts: { signal: AbortSignal }) => {
          seen.push("execute");
          signal = opts.signal;
          return answer(opts);
        },
        cleanup: () => {
          seen.push("cleanup");
        },
      };
    },
  };
  return { provider, seen, signal: () => signal };
}

describe("terminal backends (runOnBackend)", () => {
  it("terminal.backend defaults to local and is read trimmed and lowercased", () => {
    expect(terminalBackendName({})).toBe("local");
    expect(terminalBackendName({ terminal: { backend: "  " } })).toBe("local");
    expect(terminalBackendName({ terminal: { backend: " AcmeBox " } })).toBe("acmebox");
  });

  it("a command that outlives the timeout: timed out, its signal aborted, the environment released", async () => {
    const b = recordingBackend(({ signal }) => new Promise((_r, reject) => signal.addEventListener("abort", reject)));
    const run = await runOnBackend(registry("terminal_environment", "box", b.provider), "box", cmd({ timeoutS: 0.05 }));
    expect(run).toMatchObject({ timedOut: true, canceled: false, returncode: null });
    expect(b.signal()?.aborted).toBe(true);
    await tick();
    expect(b.seen).toEqual(["create", "execute", "cleanup"]);
  });

  it("an interrupt ends the wait at once and aborts the command's signal", async () => {
    const b = recordingBackend(() => new Promise(() => undefined));
    const ctrl = new AbortController();
    const pending = runOnBackend(
      registry("terminal_environment", "box", b.provider),
      "box",
      cmd({ signal: ctrl.signal }),
    );
    await tick();
    ctrl.abort();
    expect(await pending).toMatchObject({ canceled: true, timedOut: false });
    expect(b.signal()?.aborted).toBe(true);
  });

  it("execute() throwing or answering nonsense is the tool's error; the environment is still released", async () => {
    const throws = recordingBackend(() => {
      throw new Error("sandbox fell over");
    });
    await expect(runOnBackend(registry("terminal_environment", "box", throws.provider), "box", cmd())).rejects.toThrow(
      "terminal backend 'box': execute() failed: sandbox fell over",
    );
    expect(throws.seen).toEqual(["create", "execute", "cleanup"]);
    const nonsense = recordingBackend(() => 42);
    await expect(
      runOnBackend(registry("terminal_environment", "box", nonsense.provider), "box", cmd()),
    ).rejects.toThrow("execute() returned number, not {output, exit_code}");
    expect(nonsense.seen).toEqual(["create", "execute", "cleanup"]);
    // A missing output reads as empty, a non-numeric exit code as null.
    const sparse = recordingBackend(() => ({ exit_code: "0" }));
    expect(await runOnBackend(registry("terminal_environment", "box", sparse.provider), "box", cmd())).toEqual({
      output: "",
      returncode: null,
      timedOut: false,
      canceled: false,
      error: null,
    });
  });

  it("a provider that cannot create an environment, or is not available, runs nothing", async () => {
    const failing = { name: "box", create_environment: async () => Promise.reject(new Error("no quota")) };
    await expect(runOnBackend(registry("terminal_environment", "box", failing), "box", cmd())).rejects.toThrow(
      "terminal backend 'box' could not create an environment: no quota",
    );
    const noExecute = { name: "box", create_environment: () => ({}) };
    await expect(runOnBackend(registry("terminal_environment", "box", noExecute), "box", cmd())).rejects.toThrow(
      "create_environment() returned no object with an execute() method",
    );
    let created = false;
    const off = {
      name: "box",
      is_available: () => false,
      create_environment: () => {
        created = true;
        return {};
      },
    };
    const err = await runOnBackend(registry("terminal_environment", "box", off), "box", cmd()).catch((e) => e);
    expect(err).toBeInstanceOf(HermesError);
    expect((err as HermesError).message).toBe(
      "terminal backend 'box' is not available here (is_available() is false); nothing was run",
    );
    expect(created).toBe(false);
  });
});

describe("image_generate / video_generate", () => {
  const tool = (providers: ProviderRegistry, config: Record<string, unknown>, name: string) =>
    mediaTools({ providers, config: () => config }).find((t) => t.name === name)!;
  const extra = { signal: new AbortController().signal };

  it("offered only while the selected provider is registered and available (is_available may throw: not)", () => {
    const providers = new ProviderRegistry();
    const cfg = { image_gen: { provider: "pix" } };
    const img = tool(providers, cfg, "image_generate");
    expect(img.check_fn!()).toBe(false);
    const release = providers.map("image_gen").lease("pix", {
      kind: "image_gen",
      name: "pix",
      provider: { name: "pix", generate: () => "/x.png" },
      plugin_key: "t",
    });
    expect(img.check_fn!()).toBe(true);
    release();
    expect(img.check_fn!()).toBe(false);
    for (const is_available of [
      () => false,
      () => Promise.resolve(true),
      () => {
        throw new Error("x");
      },
      false,
    ]) {
      const p = registry("image_gen", "pix", { name: "pix", is_available, generate: () => "/x.png" });
      expect(tool(p, cfg, "image_generate").check_fn!()).toBe(false);
    }
    expect(
      tool(registry("image_gen", "pix", { name: "pix", generate: () => "" }), {}, "image_generate").check_fn!(),
    ).toBe(false);
  });

  it("a provider failure is a structured result for the model, never a crash", async () => {
    const cfg = { video_gen: { provider: "vid" } };
    const throwing = registry("video_gen", "vid", {
      name: "vid",
      generate: async () => {
        throw new TypeError("quota exceeded");
      },
    });
    expect(JSON.parse(String(await tool(throwing, cfg, "video_generate").handler({ prompt: "p" }, extra)))).toEqual({
      success: false,
      video: null,
      error: "quota exceeded",
      error_type: "TypeError",
      provider: "vid",
    });
    const reported = registry("video_gen", "vid", {
      name: "vid",
      generate: () => ({ success: false, error: "content policy", error_type: "invalid_input", model: "m1" }),
    });
    expect(JSON.parse(String(await tool(reported, cfg, "video_generate").handler({ prompt: "p" }, extra)))).toEqual({
      success: false,
      video: null,
      error: "content policy",
      error_type: "invalid_input",
      model: "m1",
      provider: "vid",
    });
    const empty = registry("video_gen", "vid", { name: "vid", generate: () => ({ success: true }) });
    expect(JSON.parse(String(await tool(empty, cfg, "video_generate").handler({ prompt: "p" }, extra)))).toMatchObject({
      success: false,
      error: "provider 'vid' returned no 'video' (a file path or URL)",
    });
    await expect(tool(empty, cfg, "video_generate").handler({ prompt: "  " }, extra)).rejects.toThrow(
      "video_generate needs a non-empty 'prompt'",
    );
  });

  it("an interrupt abandons a generation that does not answer", async () => {
    const providers = registry("image_gen", "pix", { name: "pix", generate: () => new Promise(() => undefined) });
    const ctrl = new AbortController();
    const pending = tool(providers, { image_gen: { provider: "pix" } }, "image_generate").handler(
      { prompt: "p" },
      { signal: ctrl.signal },
    );
    ctrl.abort();
    await expect(pending).rejects.toMatchObject({ code: "E_AGENT_INTERRUPTED" });
  });
});

describe("provider registrations the agent could not run", () => {
  it("refused: a generator without generate(), an environment without create_environment() or named local", () => {
    expect(providerShapeProblem("image_gen", "pix", { name: "pix" })).toBe("the provider needs a generate() method");
    expect(providerShapeProblem("video_gen", "v", { name: "v", generate: "no" })).toBe(
      "the provider needs a generate() method",
    );
    expect(providerShapeProblem("terminal_environment", "box", { name: "box" })).toBe(
      "the provider needs a create_environment() method",
    );
    expect(providerShapeProblem("terminal_environment", "local", { name: "local", create_environment() {} })).toBe(
      "'local' is the built-in terminal_environment name",
    );
    expect(providerShapeProblem("image_gen", "pix", { name: "pix", generate() {} })).toBeUndefined();
  });
});
