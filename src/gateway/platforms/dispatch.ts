import type { InboundMessage } from "./contract.js";

/** What pre_gateway_dispatch decided for one message. */
export type DispatchDecision =
  | { action: "skip"; reason?: string }
  | { action: "rewrite"; text: string }
  | { action: "allow" };

/** A pre_gateway_dispatch result the gateway acts on; anything else is ignored (undefined). */
export function dispatchDecision(r: unknown): DispatchDecision | undefined {
  if (!r || typeof r !== "object" || Array.isArray(r)) return undefined;
  const d = r as Record<string, unknown>;
  if (d.action === "skip") return { action: "skip", ...(typeof d.reason === "string" ? { reason: d.reason } : {}) };
  if (d.action === "rewrite" && typeof d.text === "string") return { action: "rewrite", text: d.text };
  if (d.action === "allow") return { action: "allow" };
  return undefined;
}

/** The session key of a chat, as the original builds it: `agent:main:<platform>:<chat_type>:<chat_id>[:<thread>]`. */
export function sessionKeyOf(m: Pick<InboundMessage, "platform" | "chat_type" | "chat_id" | "thread_id">): string {
  return `agent:main:${m.platform}:${m.chat_type}:${m.chat_id}${m.thread_id ? `:${m.thread_id}` : ""}`;
}

/** `gateway.platforms.<name>.allowed_users` / `allow_all_users`: who may start a turn. */
export function senderAllowed(config: Readonly<Record<string, unknown>>, sender: string | undefined): boolean {
  if (config.allow_all_users === true) return true;
  const list = Array.isArray(config.allowed_users) ? config.allowed_users.map(String) : [];
  if (list.includes("*")) return true;
  return sender !== undefined && list.includes(sender);
}

/** `/approve`, `/approve session`, `/approve always`, `/deny` as an approval answer, else undefined. */
export function approvalReply(text: string): string | undefined {
  const m = /^\/(approve|deny)(?:@\S+)?(?:\s+(session|always))?\s*$/i.exec(text.trim());
  if (!m) return undefined;
  if (m[1]!.toLowerCase() === "deny") return "deny";
  return m[2]?.toLowerCase() ?? "once";
}

/** Text split for a platform that takes at most `max` characters per message (lines kept whole where possible). */
export function chunkText(text: string, max: number | undefined): string[] {
  const limit = Math.floor(max ?? 0);
  if (limit < 1 || text.length <= limit) return [text];
  const out: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const cut = rest.lastIndexOf("\n", limit);
    let at = cut > limit / 2 ? cut : limit;
    // Never between the two halves of a surrogate pair (an emoji), when there is room to step back.
    const code = rest.charCodeAt(at - 1);
    if (at === limit && at > 1 && code >= 0xd800 && code <= 0xdbff) at--;
    out.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n/, "");
  }
  if (rest) out.push(rest);
  return out;
}
