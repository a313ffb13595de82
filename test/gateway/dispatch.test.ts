import { describe, expect, it } from "vitest";
import {
  approvalReply,
  chunkText,
  dispatchDecision,
  senderAllowed,
  sessionKeyOf,
} from "../../src/gateway/platforms/dispatch.js";

/**
 * The pure parts of the platform hub (src/gateway/platforms/dispatch.ts): what a pre_gateway_dispatch
 * result means, the session key of a chat, the allowed_users check, approval answers typed in a chat,
 * and how an answer is split for a platform with a message length limit.
 */

describe("dispatchDecision: the pre_gateway_dispatch results the gateway acts on", () => {
  it("skip, with a string reason kept and anything else as reason dropped", () => {
    expect(dispatchDecision({ action: "skip" })).toEqual({ action: "skip" });
    expect(dispatchDecision({ action: "skip", reason: "spam" })).toEqual({ action: "skip", reason: "spam" });
    expect(dispatchDecision({ action: "skip", reason: 42 })).toEqual({ action: "skip" });
    expect(dispatchDecision({ action: "skip", reason: null, extra: true })).toEqual({ action: "skip" });
  });

  it("rewrite needs a string text; only action and text are kept", () => {
    expect(dispatchDecision({ action: "rewrite", text: "new text", reason: "x" })).toEqual({
      action: "rewrite",
      text: "new text",
    });
    expect(dispatchDecision({ action: "rewrite" })).toBeUndefined();
    expect(dispatchDecision({ action: "rewrite", text: 7 })).toBeUndefined();
    expect(dispatchDecision({ action: "rewrite", text: null })).toBeUndefined();
    expect(dispatchDecision({ action: "rewrite", text: ["a"] })).toBeUndefined();
  });

  it("allow is a decision of its own", () => {
    expect(dispatchDecision({ action: "allow" })).toEqual({ action: "allow" });
    expect(dispatchDecision({ action: "allow", text: "ignored" })).toEqual({ action: "allow" });
  });

  it("anything else is ignored: no result, scalars, arrays, unknown or miscased actions", () => {
    for (const r of [
      undefined,
      null,
      false,
      true,
      0,
      1,
      "",
      "skip",
      [],
      [{ action: "skip" }],
      {},
      { action: "block" },
      { action: "SKIP" },
      { action: "Rewrite", text: "x" },
      { action: " allow" },
      { text: "x" },
      () => ({ action: "skip" }),
    ])
      expect(dispatchDecision(r), JSON.stringify(r) ?? String(r)).toBeUndefined();
  });

  it("an object without a plain prototype still counts (only its fields are read)", () => {
    const o = Object.assign(Object.create(null) as Record<string, unknown>, { action: "skip", reason: "r" });
    expect(dispatchDecision(o)).toEqual({ action: "skip", reason: "r" });
    class Decision {
      action = "rewrite";
      text = "t";
    }
    expect(dispatchDecision(new Decision())).toEqual({ action: "rewrite", text: "t" });
  });
});

describe("sessionKeyOf: agent:main:<platform>:<chat_type>:<chat_id>[:<thread>]", () => {
  it("without a thread", () => {
    expect(sessionKeyOf({ platform: "telegram", chat_type: "dm", chat_id: "123" })).toBe("agent:main:telegram:dm:123");
  });

  it("with a thread, appended after the chat id", () => {
    expect(sessionKeyOf({ platform: "telegram", chat_type: "forum", chat_id: "-100", thread_id: "7" })).toBe(
      "agent:main:telegram:forum:-100:7",
    );
  });

  it("an empty thread id is no thread", () => {
    expect(sessionKeyOf({ platform: "loop", chat_type: "group", chat_id: "g", thread_id: "" })).toBe(
      "agent:main:loop:group:g",
    );
  });

  it("two threads of one chat, and one chat id on two platforms or chat types, are different sessions", () => {
    const keys = new Set([
      sessionKeyOf({ platform: "loop", chat_type: "group", chat_id: "g" }),
      sessionKeyOf({ platform: "loop", chat_type: "group", chat_id: "g", thread_id: "1" }),
      sessionKeyOf({ platform: "loop", chat_type: "group", chat_id: "g", thread_id: "2" }),
      sessionKeyOf({ platform: "loop", chat_type: "channel", chat_id: "g" }),
      sessionKeyOf({ platform: "webhook", chat_type: "group", chat_id: "g" }),
    ]);
    expect(keys.size).toBe(5);
  });
});

describe("senderAllowed: gateway.platforms.<name>.allowed_users / allow_all_users", () => {
  it("a listed sender passes, anyone else and a message without a sender do not", () => {
    const config = { allowed_users: ["alice", "bob"] };
    expect(senderAllowed(config, "alice")).toBe(true);
    expect(senderAllowed(config, "bob")).toBe(true);
    expect(senderAllowed(config, "mallory")).toBe(false);
    expect(senderAllowed(config, "Alice")).toBe(false);
    expect(senderAllowed(config, "")).toBe(false);
    expect(senderAllowed(config, undefined)).toBe(false);
  });

  it("no list, an empty list or a list that is not an array allows nobody", () => {
    expect(senderAllowed({}, "alice")).toBe(false);
    expect(senderAllowed({ allowed_users: [] }, "alice")).toBe(false);
    expect(senderAllowed({ allowed_users: "alice" }, "alice")).toBe(false);
    expect(senderAllowed({ allowed_users: { alice: true } }, "alice")).toBe(false);
    expect(senderAllowed({ allowed_users: null }, undefined)).toBe(false);
  });

  it("numeric ids from YAML match the string ids platforms send", () => {
    expect(senderAllowed({ allowed_users: [123456789, "alice"] }, "123456789")).toBe(true);
    expect(senderAllowed({ allowed_users: [123456789] }, "12345678")).toBe(false);
  });

  it('"*" in the list and allow_all_users: true allow everyone, even a message without a sender', () => {
    expect(senderAllowed({ allowed_users: ["*"] }, "mallory")).toBe(true);
    expect(senderAllowed({ allowed_users: ["alice", "*"] }, undefined)).toBe(true);
    expect(senderAllowed({ allow_all_users: true }, "mallory")).toBe(true);
    expect(senderAllowed({ allow_all_users: true, allowed_users: ["alice"] }, undefined)).toBe(true);
  });

  it("allow_all_users must be the boolean true", () => {
    for (const v of ["true", 1, "yes", {}, [true]])
      expect(senderAllowed({ allow_all_users: v }, "mallory"), JSON.stringify(v)).toBe(false);
    expect(senderAllowed({ allow_all_users: false, allowed_users: ["alice"] }, "alice")).toBe(true);
  });
});

describe("approvalReply: /approve and /deny typed in a chat", () => {
  it("the four answers", () => {
    expect(approvalReply("/approve")).toBe("once");
    expect(approvalReply("/approve session")).toBe("session");
    expect(approvalReply("/approve always")).toBe("always");
    expect(approvalReply("/deny")).toBe("deny");
  });

  it("case and surrounding whitespace do not matter", () => {
    expect(approvalReply("/APPROVE")).toBe("once");
    expect(approvalReply("/Approve Session")).toBe("session");
    expect(approvalReply("  /approve   ALWAYS \n")).toBe("always");
    expect(approvalReply("\t/DENY ")).toBe("deny");
  });

  it("/deny with a scope is still a denial", () => {
    expect(approvalReply("/deny session")).toBe("deny");
    expect(approvalReply("/deny always")).toBe("deny");
  });

  it("anything else is not an answer", () => {
    for (const t of [
      "",
      "approve",
      "/approved",
      "/approvex",
      "/approve once",
      "/approve session now",
      "/approve sessions",
      "/approvesession",
      "/deny everything",
      "/denied",
      "please /approve",
      "/ approve",
      "//approve",
      "/reset",
    ])
      expect(approvalReply(t), JSON.stringify(t)).toBeUndefined();
  });
});

describe("chunkText: an answer split for a platform's max_message_length", () => {
  it("no limit (undefined, 0, negative) or a text within it: one part, unchanged", () => {
    const text = "x".repeat(5000);
    expect(chunkText(text, undefined)).toEqual([text]);
    expect(chunkText(text, 0)).toEqual([text]);
    expect(chunkText(text, -1)).toEqual([text]);
    expect(chunkText("short", 100)).toEqual(["short"]);
    expect(chunkText("", 10)).toEqual([""]);
  });

  it("exactly at the limit: one part; one character over: two", () => {
    expect(chunkText("abcdefghij", 10)).toEqual(["abcdefghij"]);
    expect(chunkText("abcdefghijk", 10)).toEqual(["abcdefghij", "k"]);
    expect(chunkText("x".repeat(20), 10)).toEqual(["x".repeat(10), "x".repeat(10)]);
  });

  it("a long text without newlines is cut hard at the limit, nothing lost", () => {
    const text = Array.from({ length: 257 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
    const parts = chunkText(text, 50);
    expect(parts.map((p) => p.length)).toEqual([50, 50, 50, 50, 50, 7]);
    expect(parts.join("")).toBe(text);
  });

  it("lines are kept whole: the cut is at the last newline within the limit, which is dropped", () => {
    const lines = ["first line here", "second line", "third one is longer", "4th"];
    const text = lines.join("\n");
    const parts = chunkText(text, 30);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(30);
    expect(parts).toEqual(["first line here\nsecond line", "third one is longer\n4th"]);
  });

  it("a newline exactly at the limit: the part is the full limit, the next starts after the newline", () => {
    const text = `${"a".repeat(10)}\n${"b".repeat(5)}`;
    expect(chunkText(text, 10)).toEqual(["a".repeat(10), "b".repeat(5)]);
  });

  it("a newline in the first half of the window is not used: the cut is hard at the limit", () => {
    const text = `ab\n${"c".repeat(20)}`;
    const parts = chunkText(text, 10);
    expect(parts).toEqual([`ab\n${"c".repeat(7)}`, "c".repeat(10), "c".repeat(3)]);
    expect(parts.join("")).toBe(text);
  });

  it("only one newline is dropped at a cut: blank lines survive as the start of the next part", () => {
    const text = `${"a".repeat(8)}\n\n${"b".repeat(4)}`;
    const parts = chunkText(text, 10);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(10);
    expect(parts.join("\n")).toBe(text);
  });

  it("every part fits and the text is rebuilt from the parts, for many lengths and limits", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const len = rand(400);
      const text = Array.from({ length: len }, () => (rand(12) === 0 ? "\n" : "x")).join("");
      const max = 1 + rand(60);
      const parts = chunkText(text, max);
      for (const p of parts) expect(p.length, `${JSON.stringify(text)} / ${max}`).toBeLessThanOrEqual(max);
      // A cut drops at most the one newline it was made at.
      expect(parts.join("").replace(/\n/g, "").length).toBe(text.replace(/\n/g, "").length);
      expect(parts.join("").length).toBeGreaterThanOrEqual(text.length - parts.length);
      if (text.length > 0) expect(parts.every((p) => p.length > 0)).toBe(true);
    }
  });

  it("a limit of 1 still terminates and keeps every character", () => {
    expect(chunkText("abc", 1)).toEqual(["a", "b", "c"]);
    expect(chunkText("a\nb", 1)).toEqual(["a", "b"]);
  });
});

describe("chunkText and approvalReply: what chats send", () => {
  it("never cuts an emoji in half, and a fractional limit below 1 means no limit", () => {
    const parts = chunkText("ab😀cd", 3);
    expect(parts.join("")).toBe("ab😀cd");
    for (const p of parts) expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    expect(chunkText("abc", 0.5)).toEqual(["abc"]);
  });

  it("a group chat's /approve@botname is an answer too", () => {
    expect(approvalReply("/approve@hermes_bot")).toBe("once");
    expect(approvalReply("/approve@hermes_bot session")).toBe("session");
    expect(approvalReply("/deny@hermes_bot")).toBe("deny");
  });
});
