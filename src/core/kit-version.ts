import { readFileSync } from "node:fs";

/**
 * hermes-kit's version from its package.json, two folders up from this file in src/core or dist/core.
 * No other import: `hermes --version` answers with this module alone (issue 19, start-up cost).
 */
export function kitVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
}
