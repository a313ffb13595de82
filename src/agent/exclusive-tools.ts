import type { Logger } from "pino";
import { RegistrationHandle } from "../runtime/ledger.js";
import type { ToolSchema } from "../runtime/registries.js";
import type { Runtime } from "../runtime/runtime.js";

/** A method of a plugin's provider object by its snake_case name, or its camelCase alias (as on ctx). */
export function providerMethod(obj: unknown, snake: string): ((...args: unknown[]) => unknown) | undefined {
  if (!obj || (typeof obj !== "object" && typeof obj !== "function")) return undefined;
  const camel = snake.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  const rec = obj as Record<string, unknown>;
  const fn = typeof rec[snake] === "function" ? rec[snake] : rec[camel];
  return typeof fn === "function" ? (fn as (...args: unknown[]) => unknown).bind(obj) : undefined;
}

/**
 * The tools a memory provider or context engine offers (`get_tool_schemas()`, dispatched to
 * `handle_tool_call(name, args, extra)`), in the runtime's tool registry under the provider's plugin,
 * so they reach the model and run through the tool pipeline like any tool. A name already taken keeps
 * its owner. The tools go when the plugin unloads.
 */
export async function registerProviderTools(
  runtime: Pick<Runtime, "tools" | "ledger">,
  provider: unknown,
  owner: string,
  log: Logger,
): Promise<string[]> {
  const schemasOf = providerMethod(provider, "get_tool_schemas");
  const handle = providerMethod(provider, "handle_tool_call");
  if (!schemasOf) return [];
  const schemas = await schemasOf();
  if (!Array.isArray(schemas)) {
    log.warn({ plugin: owner, code: "W_AGENT_MEMORY_FAILED" }, "get_tool_schemas() did not return a list; no tools");
    return [];
  }
  const added: string[] = [];
  for (const raw of schemas) {
    const schema = (raw && typeof raw === "object" ? raw : {}) as ToolSchema;
    const name = typeof schema.name === "string" ? schema.name.trim() : "";
    if (!name) {
      log.warn({ plugin: owner }, "a tool schema without a name is ignored");
      continue;
    }
    if (runtime.tools.get(name)) {
      log.warn(
        { plugin: owner },
        `provider tool '${name}' is not added: the name is taken by ${runtime.tools.get(name)!.owner}`,
      );
      continue;
    }
    const release = runtime.tools.lease(name, {
      name,
      toolset: owner,
      schema,
      handler: (args, extra) => {
        if (!handle) throw new Error(`the provider has no handle_tool_call for '${name}'`);
        return handle(name, args, extra);
      },
      requires_env: [],
      description: typeof schema.description === "string" ? schema.description : "",
      emoji: "",
      owner,
    });
    runtime.ledger.add(new RegistrationHandle("tool", name, owner, release));
    added.push(name);
  }
  return added;
}
