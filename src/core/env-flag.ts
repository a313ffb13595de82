import { HermesError } from "./errors.js";

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["", "0", "false", "no", "off"]);

/**
 * The one boolean parser for every HERMES_* flag. Unset or empty is false; anything outside the
 * two sets is refused rather than guessed, so a typo never silently turns a feature on or off.
 */
export function envFlag(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env[name];
  if (raw === undefined) return false;
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new HermesError("E_ENV_FLAG", { message: `${name}=${JSON.stringify(raw)} is not a boolean` });
}
