/**
 * The one place a test finds `../shared` (the folder beside the checkout with real-world fixtures
 * nobody here wrote). It exists on the project's own machines and in CI, never in a fresh clone.
 *
 * A test that reads it asks `hasShared("<what is skipped>")` once at the top of its file and guards
 * only the tests that read it (`it.skipIf(!SHARED)`, `describe.skipIf(!SHARED)`):
 * - present: true;
 * - absent outside CI: prints "<what> skipped: ../shared is absent (a fresh clone); CI runs it" and
 *   returns false;
 * - absent in CI (`CI` set): throws, failing the file loudly (CI always has it).
 *
 * HERMES_TEST_SHARED_DIR points it elsewhere (test/project/fresh-clone.test.ts sets it to a missing
 * folder to prove the rule). test/project/fresh-clone.test.ts also checks that no other file under
 * test/ spells out a path to ../shared.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** `<repo>/../shared`, or $HERMES_TEST_SHARED_DIR. */
export const SHARED_DIR = process.env.HERMES_TEST_SHARED_DIR || join(ROOT, "..", "shared");
/** `<repo>/../shared/fixtures`: manifests/, packs/, configs/, index/ (with index/plugin-catalog/). */
export const SHARED_FIXTURES = join(SHARED_DIR, "fixtures");

/** Whether the shared fixtures are here; see the file comment for what happens when they are not. */
export function hasShared(what: string): boolean {
  if (existsSync(SHARED_FIXTURES)) return true;
  if (process.env.CI) {
    throw new Error(`${what}: ../shared is required in CI, and ${SHARED_FIXTURES} does not exist`);
  }
  console.warn(`${what} skipped: ../shared is absent (a fresh clone); CI runs it`);
  return false;
}
