/**
 * pre_tts_synthesis (`tts-policy`): the fold of the original's enforce_pre_synthesis, dispatched through a
 * real HookBus with real callbacks; text_to_speech (test/e2e/agent-voice.test.ts) fires it end to end.
 */
import { describe, expect, it } from "vitest";
import { HOOK_CATALOG } from "../../src/contracts/hook-catalog.js";
import { FAIL_CLOSED_TIMEOUT_MESSAGE, HookBus, ttsPolicyRound } from "../../src/runtime/hooks.js";
import { FailureReporter } from "../../src/runtime/reporter.js";
import { captureLog } from "./helpers.js";

function bus(...cbs: Array<(p: Record<string, unknown>) => unknown>): HookBus {
  const b = new HookBus(new FailureReporter(captureLog().log));
  cbs.forEach((cb, i) => b.add("pre_tts_synthesis", cb, `p${i}`));
  return b;
}

const decide = (b: HookBus, text: string) => b.ttsPolicy("pre_tts_synthesis", { text, provider: "espeak" });

describe("pre_tts_synthesis", () => {
  it("is a fail-closed directive hook folded by tts-policy", () => {
    expect(HOOK_CATALOG.pre_tts_synthesis).toMatchObject({ combine: "tts-policy", timeout: "fail-closed" });
  });

  it("with no callbacks, or only nulls, speaks the text as it is", async () => {
    expect(await decide(bus(), "hi")).toEqual({ text: "hi" });
    expect(
      await decide(
        bus(
          () => null,
          () => undefined,
        ),
        "hi",
      ),
    ).toEqual({ text: "hi" });
  });

  it("a rewrite is checked by every callback again, which see the rewritten script and may keep it", async () => {
    const seen: string[] = [];
    const b = bus(
      (p) => (seen.push(`a:${p.text}`), { text: String(p.text).replace("3", "three") }),
      (p) => (seen.push(`b:${p.text}`), null),
    );
    expect(await decide(b, "3 apples")).toEqual({ text: "three apples" });
    expect(seen).toEqual(["a:3 apples", "b:3 apples", "a:three apples", "b:three apples"]);
  });

  it("within a round the last rewrite wins; a second rewrite that changes the script again is refused", async () => {
    const last = bus(
      (p) => (p.text === "x" ? { text: "one" } : null),
      (p) => (p.text === "x" ? { text: "two" } : null),
    );
    expect(await decide(last, "x")).toEqual({ text: "two" });
    let n = 0;
    const unstable = bus(() => ({ text: `v${++n}` }));
    expect(await decide(unstable, "x")).toEqual({
      blocked: "pre_tts_synthesis returned an unstable script (a second rewrite changed it again)",
    });
  });

  it("a block refuses with its message (or a default); a block seen only on the re-check refuses too", async () => {
    expect(
      await decide(
        bus(() => ({ action: "block", message: "no" })),
        "x",
      ),
    ).toEqual({ blocked: "no" });
    expect(
      await decide(
        bus(() => ({ action: "block" })),
        "x",
      ),
    ).toEqual({ blocked: "TTS synthesis blocked" });
    const late = bus(
      (p) => (p.text === "x" ? { text: "bad word" } : null),
      (p) => (p.text === "bad word" ? { action: "block", message: "caught" } : null),
    );
    expect(await decide(late, "x")).toEqual({ blocked: "caught" });
  });

  it("anything malformed, a throw or a timeout refuses: the hook fails closed", async () => {
    const invalid = "pre_tts_synthesis returned an invalid script or directive";
    for (const r of [
      { text: "" },
      { text: 3 },
      { text: "a", extra: 1 },
      { action: "block", why: "x" },
      { action: "allow" },
    ])
      expect(ttsPolicyRound([r], "x"), JSON.stringify(r)).toEqual({ blocked: invalid });
    for (const r of ["text", 1, []])
      expect(ttsPolicyRound([r], "x")).toEqual({ blocked: "pre_tts_synthesis returned an invalid directive" });
    const thrown = await decide(
      bus(function policy() {
        throw new TypeError("boom");
      }),
      "x",
    );
    expect(thrown).toEqual({ blocked: "pre_tts_synthesis plugin callback policy raised TypeError: boom" });
    const slow = bus(() => new Promise(() => undefined));
    slow.timeoutSeconds = 0.05;
    expect(await decide(slow, "x")).toEqual({ blocked: FAIL_CLOSED_TIMEOUT_MESSAGE });
  });
});
