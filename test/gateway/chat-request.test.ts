import { describe, expect, it } from "vitest";
import {
  contentText,
  parseChatMessages,
  sessionIdHeader,
  sessionKeyHeader,
} from "../../src/gateway/http/chat-request.js";
import { ApiError } from "../../src/gateway/http/openai-error.js";
import { gatewaySettings, isLoopback } from "../../src/gateway/settings.js";
import { thrown } from "../support/util.js";

describe("chat completion messages", () => {
  it("takes a string or text parts, and refuses every other part type naming the message", () => {
    expect(contentText("hi", "p")).toBe("hi");
    expect(contentText([{ type: "text", text: "a" }, { type: "input_text", text: "b" }, "c"], "p")).toBe("a\nb\nc");
    const e = thrown(() => contentText([{ type: "image_url", image_url: { url: "x" } }], "messages[2].content"));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 400, init: { code: "unsupported_content_type", param: "messages[2].content" } });
    expect(thrown(() => contentText(42, "p"))).toMatchObject({ status: 400 });
    expect(thrown(() => contentText([{ type: "text", text: 3 }], "p"))).toMatchObject({
      init: { code: "invalid_content_part" },
    });
  });

  it("the last user message is the input; earlier user and assistant messages the history", () => {
    const p = parseChatMessages(
      [
        { role: "system", content: "be brief" },
        { role: "user", content: "one" },
        { role: "assistant", content: "1" },
        { role: "tool", content: "ignored" },
        { role: "user", content: "two" },
      ],
      "k",
    );
    expect(p.text).toBe("two");
    expect(p.history).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
    ]);
    const again = parseChatMessages(
      [
        { role: "system", content: "be brief" },
        { role: "user", content: "one" },
      ],
      "k",
    );
    expect(again.derivedId).toBe(p.derivedId);
    expect(again.derivedId).toMatch(/^api-[0-9a-f]{16}$/);
    expect(parseChatMessages([{ role: "user", content: "one" }], "k").derivedId).not.toBe(p.derivedId);
    expect(parseChatMessages([{ role: "user", content: "one" }], "other key").derivedId).not.toBe(
      parseChatMessages([{ role: "user", content: "one" }], "k").derivedId,
    );
  });

  it("refuses a conversation that does not end with the user's text", () => {
    for (const messages of [[{ role: "assistant", content: "x" }], [{ role: "user", content: "  " }], ["str"]])
      expect(thrown(() => parseChatMessages(messages, "k"))).toMatchObject({ status: 400 });
  });

  it("checks the session headers' shape", () => {
    expect(sessionIdHeader(undefined)).toBeUndefined();
    expect(sessionIdHeader("api-0123456789abcdef")).toBe("api-0123456789abcdef");
    expect(thrown(() => sessionIdHeader("../x"))).toMatchObject({ init: { code: "invalid_session_id" } });
    expect(sessionKeyHeader("user:42")).toBe("user:42");
    expect(thrown(() => sessionKeyHeader("a\nb"))).toMatchObject({ init: { code: "invalid_session_key" } });
    expect(thrown(() => sessionKeyHeader("k".repeat(257)))).toMatchObject({ status: 400 });
  });
});

describe("gateway settings", () => {
  it("defaults to 127.0.0.1:8642 and reads gateway.* of config.yaml", () => {
    const d = gatewaySettings({});
    expect(d).toMatchObject({ host: "127.0.0.1", port: 8642, maxQueued: 64, modelName: "hermes-agent" });
    expect(d.maxConcurrent).toBeGreaterThanOrEqual(1);
    const s = gatewaySettings({
      gateway: {
        api_server: { host: "0.0.0.0", port: 9000, cors_origins: "http://a, http://b", model_name: "mine" },
        max_concurrent_turns: 3,
        shutdown_grace_seconds: 0,
      },
    });
    expect(s).toMatchObject({
      host: "0.0.0.0",
      port: 9000,
      maxConcurrent: 3,
      shutdownGraceSeconds: 0,
      modelName: "mine",
    });
    expect(s.corsOrigins).toEqual(["http://a", "http://b"]);
  });

  it("knows loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.2", "example.com"]) expect(isLoopback(h)).toBe(false);
  });
});
