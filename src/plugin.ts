/**
 * Types for plugin authors: `import type { PluginContext } from "hermes-kit/plugin"`.
 * Type-only on purpose: the runtime hands each plugin its context; a plugin never constructs one.
 */
import type { PluginContext } from "./runtime/context.js";

export type { PluginContext, ToolSpecInput } from "./runtime/context.js";
export type { HookName, MiddlewareKind } from "./contracts/hook-catalog.js";
export type { HookCallback } from "./runtime/hooks.js";
export type { MiddlewareCallback } from "./runtime/middleware.js";
export type { PluginManifest } from "./manifest/parse.js";
export type { CapabilityId } from "./contracts/capabilities.js";
export type {
  ImageGenProvider,
  VideoGenProvider,
  TerminalEnvironmentProvider,
  TerminalEnvironment,
  TtsProvider,
  TranscriptionProvider,
  TranscribeResult,
} from "./runtime/provider-shapes.js";

/** What a plugin's entry module exports: `export function register(ctx) { … }`. */
export type RegisterFunction = (ctx: PluginContext) => void | Promise<void>;
