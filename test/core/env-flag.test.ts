/**
 * The one strict boolean parser for HERMES_* flags: unset/empty is false, a known spelling is
 * honoured (case and surrounding spaces ignored), anything else is refused with E_ENV_FLAG.
 */
import { describe, expect, it } from "vitest";
import { envFlag } from "../../src/core/env-flag.js";
import { HermesError } from "../../src/core/errors.js";
import { thrown } from "../support/util.js";

const FLAG = "HERMES_TEST_FLAG";

describe("envFlag", () => {
  it("unset is false", () => {
    expect(envFlag(FLAG, {})).toBe(false);
  });

  it.each(["1", "true", "TRUE", "True", "yes", "YES", "on", "On", " 1 ", "\ttrue\n"])("%j is true", (v) => {
    expect(envFlag(FLAG, { [FLAG]: v })).toBe(true);
  });

  it.each(["", "   ", "0", "false", "FALSE", "no", "No", "off", " OFF "])("%j is false", (v) => {
    expect(envFlag(FLAG, { [FLAG]: v })).toBe(false);
  });

  it.each(["maybe", "2", "-1", "tru", "y", "n", "enabled", "1 1"])(
    "%j is refused with E_ENV_FLAG naming the variable and the value",
    (v) => {
      const e = thrown(() => envFlag(FLAG, { [FLAG]: v }));
      expect(e).toBeInstanceOf(HermesError);
      expect(e.code).toBe("E_ENV_FLAG");
      expect(e.message).toContain(FLAG);
      expect(e.message).toContain(JSON.stringify(v));
    },
  );

  it("reads only the named variable", () => {
    expect(envFlag(FLAG, { OTHER: "1" })).toBe(false);
    expect(envFlag(FLAG, { [FLAG]: "1", OTHER: "maybe" })).toBe(true);
  });

  it("defaults to process.env", () => {
    const saved = process.env[FLAG];
    try {
      process.env[FLAG] = "yes";
      expect(envFlag(FLAG)).toBe(true);
      delete process.env[FLAG];
      expect(envFlag(FLAG)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env[FLAG];
      else process.env[FLAG] = saved;
    }
  });
});
