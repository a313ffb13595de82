/**
 * The platform adapter contract: what a `ctx.register_platform(name, label, adapter_factory, check_fn)`
 * plugin gives hermes serve. The factory gets an AdapterHost and returns a PlatformAdapter; the gateway
 * connects it, hands its inbound messages to the agent, and sends the answers back through it.
 */

/** Where a message came from, as the platform names it. */
export type ChatType = "dm" | "group" | "channel" | "thread" | "forum" | "webhook";

/** One message a person (or a service) sent to the bot. */
export interface InboundMessage {
  /** The platform's registered name (`telegram`, `webhook`, …). */
  platform: string;
  chat_id: string;
  chat_type: ChatType;
  /** A topic or thread inside the chat, when the platform has them. */
  thread_id?: string;
  /** The platform's id of this message (reactions and replies name it). */
  message_id?: string;
  /** Who sent it; messages without a sender are refused unless the platform allows everyone. */
  sender_id?: string;
  sender_name?: string;
  text: string;
}

export interface SendOptions {
  thread_id?: string;
  /** Answer to this message, where the platform shows replies. */
  reply_to?: string;
}

export interface SendResult {
  ok: boolean;
  message_id?: string;
  error?: string;
}

/** What an adapter does; the optional methods are actions a platform may not have. */
export interface PlatformAdapter {
  /** Start receiving (polling, a listener). Throwing or returning false means not connected. */
  connect(): Promise<boolean | undefined>;
  disconnect(): Promise<void>;
  /** Whether it is connected now (a dropped connection turns it false). */
  readonly connected: boolean;
  /** Send text; the gateway splits answers longer than `max_message_length` into several sends. */
  send(chat_id: string, text: string, opts?: SendOptions): Promise<SendResult>;
  edit?(chat_id: string, message_id: string, text: string): Promise<SendResult>;
  /** Show "typing…" while a turn runs. */
  typing?(chat_id: string, opts?: { thread_id?: string }): Promise<void>;
  /** ctx.platform_actions.add_reaction. */
  add_reaction?(chat_id: string, message_id: string, emoji: string): Promise<boolean>;
  /** ctx.platform_actions.set_thread_title. */
  set_thread_title?(chat_id: string, thread_id: string, title: string): Promise<boolean>;
  /** Longest text one send takes (0 or absent: no limit). */
  readonly max_message_length?: number;
}

/** What the gateway gives an adapter. */
export interface AdapterHost {
  /** The platform's name. */
  name: string;
  /** `gateway.platforms.<name>` of config.yaml. */
  config: Readonly<Record<string, unknown>>;
  env: Readonly<NodeJS.ProcessEnv>;
  /** Hand one inbound message to the gateway; resolves once it is queued (not answered). */
  deliver(message: InboundMessage): Promise<void>;
  log: { info(msg: string): void; warn(msg: string): void; error(msg: string): void };
}

export type AdapterFactory = (host: AdapterHost) => PlatformAdapter | Promise<PlatformAdapter>;
