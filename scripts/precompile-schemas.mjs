// Writes dist/core/schema-validators/*.cjs: each schema compiled to code once at build time
// (Ajv standalone), so no command pays Ajv's compile cost at startup. src/core/schema.ts uses
// a file only while its digest matches schemas/.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";

const standaloneCode = standalone.default ?? standalone;
const schema = await import(new URL("../dist/core/schema.js", import.meta.url).href);
const { docs, digest } = schema.schemaSources();
const ajv = new Ajv2020({ ...schema.AJV_OPTIONS, code: { source: true, esm: false } });
for (const doc of docs) ajv.addSchema(doc);
const ids = [...docs.map((d) => d.$id), ...schema.PRECOMPILED_FRAGMENTS.map((f) => `${schema.SCHEMA_BASE}${f}`)];
for (const id of ids) {
  const out = fileURLToPath(new URL(`../dist/core/${schema.precompiledFile(id)}`, import.meta.url));
  mkdirSync(dirname(out), { recursive: true });
  const code = standaloneCode(ajv, { validate: id });
  writeFileSync(`${out}.tmp`, `${code}\nexports.digest = ${JSON.stringify(digest)};\n`);
  renameSync(`${out}.tmp`, out);
}
