/**
 * A fresh clone tests green, for real: every test file that reads the shared fixtures
 * (test/shared-dir.ts), run in a child vitest with the folder missing and CI unset, passes, with its
 * fixture tests skipped and the reason printed for each file. In the slow suite: it runs those files
 * a second time.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../support/cli.js";
import { sharedUsers, vitestWithoutShared } from "./helpers.js";

const SKIP_LINE = /skipped: \.\.\/shared is absent \(a fresh clone\); CI runs it/;
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

it("every test file that reads the shared fixtures passes without them, its fixture tests skipped with the " +
  "reason printed", () => {
  const users = sharedUsers();
  expect(users.length).toBeGreaterThanOrEqual(7);
  const r = vitestWithoutShared(users, join(ROOT, "node_modules", ".hermes-no-shared-here"));
  const tail = r.output.slice(-4000);
  expect(r.json, tail).toBeDefined();
  expect(r.json!.numFailedTests, tail).toBe(0);
  expect(r.code, tail).toBe(0);
  expect(r.json!.numPendingTests).toBeGreaterThan(20);
  expect(r.json!.numPassedTests).toBeGreaterThan(50);
  for (const rel of users) expect(r.output, rel).toMatch(new RegExp(`${esc(rel)}.* ${SKIP_LINE.source}`));
}, 300_000);
