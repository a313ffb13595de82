import { hmacSha256Hex } from "../../core/hash.js";
import type { ChatMessage } from "../../agent/types.js";
import { ApiError } from "./openai-error.js";

const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);
/** Characters of one message's text, at most (a request body is capped at 10 MB anyway). */
const MAX_TEXT = 1_000_000;

/** A message's content as text: a string, or typed text parts; any other part type is refused. */
export function contentText(content: unknown, param: string): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    throw new ApiError(400, `${param} must be a string or an array of content parts`, { param, code: "invalid_type" });
  const texts: string[] = [];
  content.forEach((part, j) => {
    if (typeof part === "string") texts.push(part);
    else if (part && typeof part === "object" && TEXT_PARTS.has((part as { type?: unknown }).type as string)) {
      const t = (part as { text?: unknown }).text;
      if (typeof t !== "string")
        throw new ApiError(400, `${param}[${j}].text must be a string`, { param, code: "invalid_content_part" });
      texts.push(t);
    } else {
      const type = part && typeof part === "object" ? (part as { type?: unknown }).type : typeof part;
      throw new ApiError(
        400,
        `content part type ${JSON.stringify(type)} is not supported: only text parts (text, input_text) are; ` +
          "images, audio and files are not accepted by this server",
        { param, code: "unsupported_content_type" },
      );
    }
  });
  const text = texts.join("\n");
  if (text.length > MAX_TEXT)
    throw new ApiError(400, `${param} is longer than ${MAX_TEXT} characters`, { param, code: "content_too_long" });
  return text;
}

export interface ParsedChat {
  /** The last user message: the turn's input. */
  text: string;
  /** The user and assistant messages before it, as text. */
  history: ChatMessage[];
  /** A stable id for a client that resends the whole conversation: system prompt and first user message. */
  derivedId: string;
}

/**
 * `messages` of a chat completion request: the last message is the user's input. The derived session
 * id is keyed by the server's secret, so nobody can compute another client's id from its first message.
 */
export function parseChatMessages(messages: readonly unknown[], secret: string | Uint8Array): ParsedChat {
  const parsed = messages.map((m, i) => {
    const param = `messages[${i}]`;
    if (!m || typeof m !== "object" || Array.isArray(m))
      throw new ApiError(400, `${param} must be an object with role and content`, { param, code: "invalid_type" });
    const role = (m as { role?: unknown }).role;
    if (typeof role !== "string")
      throw new ApiError(400, `${param}.role must be a string`, { param: `${param}.role`, code: "invalid_type" });
    return { role, content: contentText((m as { content?: unknown }).content, `${param}.content`) };
  });
  const last = parsed[parsed.length - 1];
  if (!last || last.role !== "user" || !last.content.trim())
    throw new ApiError(400, "the last message must be a user message with text", {
      param: "messages",
      code: "no_user_message",
    });
  const system = parsed.filter((m) => m.role === "system").map((m) => m.content);
  const firstUser = parsed.find((m) => m.role === "user")?.content ?? "";
  const history: ChatMessage[] = parsed
    .slice(0, -1)
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role as "user" | "assistant", content: m.content }));
  return {
    text: last.content,
    history,
    derivedId: `api-${hmacSha256Hex(secret, `${system.join("\n")}\n${firstUser}`).slice(0, 16)}`,
  };
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** A session id (X-Hermes-Session-Id, a path, a body field): an id of the shape this server gives out. */
export function sessionIdHeader(v: string | string[] | undefined, param = "X-Hermes-Session-Id"): string | undefined {
  if (v === undefined) return undefined;
  const s = Array.isArray(v) ? v[0] : v;
  if (!s || !SESSION_ID.test(s))
    throw new ApiError(400, `${param} must be 1-128 letters, digits or . _ : - (as the server returned it)`, {
      param,
      code: "invalid_session_id",
    });
  return s;
}

/** X-Hermes-Session-Key: up to 256 characters, no control characters. */
export function sessionKeyHeader(v: string | string[] | undefined): string | undefined {
  if (v === undefined) return undefined;
  const s = Array.isArray(v) ? v[0] : v;
  if (!s || s.length > 256 || [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new ApiError(400, "X-Hermes-Session-Key must be 1-256 characters without control characters", {
      param: "X-Hermes-Session-Key",
      code: "invalid_session_key",
    });
  return s;
}
