import { defineConfig } from "vitest/config";
import { baseTest, SLOW_TESTS } from "./vitest.config.ts";

/** `npm run test:slow`: the kill matrices and other long suites (see vitest.config.ts). */
export default defineConfig({
  test: {
    ...baseTest,
    include: SLOW_TESTS,
  },
});
