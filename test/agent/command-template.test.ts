/** The voice command templates: split like a shell, run without one, placeholders never re-split. */
import { describe, expect, it } from "vitest";
import { renderCommand, splitCommand } from "../../src/agent/tools/command-template.js";
import { HermesError } from "../../src/core/errors.js";
import { thrown } from "../support/util.js";

describe("splitCommand", () => {
  it("splits on blanks outside quotes, keeps quoted text literal, and expands only a leading ~/", () => {
    expect(splitCommand(`a  'b c' "d \\"e\\" $HOME" f\\ g ~/m x~/y '~/z' |`, "t", "/home/u")).toEqual([
      "a",
      "b c",
      'd "e" $HOME',
      "f g",
      "/home/u/m",
      "x~/y",
      "~/z",
      "|",
    ]);
    expect(splitCommand(`'' ""`, "t")).toEqual(["", ""]);
  });

  it("refuses an unterminated quote and an empty command with E_VOICE_COMMAND_TEMPLATE", () => {
    for (const bad of [`a 'b`, `a "b`, "   "]) {
      const e = thrown(() => splitCommand(bad, "tts.providers.x.command"));
      expect(e).toBeInstanceOf(HermesError);
      expect(e.code).toBe("E_VOICE_COMMAND_TEMPLATE");
      expect((e as Error).message).toMatch(/^tts\.providers\.x\.command: /);
    }
  });
});

describe("renderCommand", () => {
  it("fills placeholders inside each word, so a value with blanks or shell text stays one argument", () => {
    const argv = renderCommand(
      "tool --in={input_path} -o {output_path} '{{literal}}' {format}",
      { input_path: "/tmp/a b/in.txt", output_path: "$(rm -rf ~); x", format: "wav" },
      "t",
    );
    expect(argv).toEqual(["tool", "--in=/tmp/a b/in.txt", "-o", "$(rm -rf ~); x", "{literal}", "wav"]);
  });

  it("names an unknown placeholder and the known ones", () => {
    const e = thrown(() => renderCommand("piper --speed {speed}", { input_path: "i", output_path: "o" }, "cmd"));
    expect(e.code).toBe("E_VOICE_COMMAND_TEMPLATE");
    expect((e as Error).message).toBe("cmd: unknown placeholder {speed} (known: {input_path}, {output_path})");
    expect(thrown(() => renderCommand("x {constructor}", {}, "cmd"))).toBeInstanceOf(HermesError);
  });
});
