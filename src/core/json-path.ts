// JSON paths for messages, apart from yaml-source.ts so that a schema check loads no YAML parser.

export type JsonPath = ReadonlyArray<string | number>;

/** `plugins.entries["image_gen/openai"].settings[0]` — readable and unambiguous. */
export function formatJsonPath(path: JsonPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out || "(root)";
}

/** Ajv's `/plugins/entries/a~1b` → ["plugins","entries","a/b"]. */
export function parsePointer(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
