import { createRequire } from "node:module";
import type * as Yaml from "yaml";

const require = createRequire(import.meta.url);
let lib: typeof Yaml | undefined;

/** The yaml package, loaded on first use: a command that imports a parser but reads no YAML skips ~70 modules. */
export function yamlLib(): typeof Yaml {
  return (lib ??= require("yaml") as typeof Yaml);
}

export const isMap = ((n: unknown) => yamlLib().isMap(n)) as typeof Yaml.isMap;
export const isSeq = ((n: unknown) => yamlLib().isSeq(n)) as typeof Yaml.isSeq;
export const isPair = ((n: unknown) => yamlLib().isPair(n)) as typeof Yaml.isPair;
export const isScalar = ((n: unknown) => yamlLib().isScalar(n)) as typeof Yaml.isScalar;
export const parseDocument = ((...a: Parameters<typeof Yaml.parseDocument>) =>
  yamlLib().parseDocument(...a)) as typeof Yaml.parseDocument;
export const stringify = ((...a: Parameters<typeof Yaml.stringify>) =>
  yamlLib().stringify(...a)) as typeof Yaml.stringify;
export const newLineCounter = (): Yaml.LineCounter => new (yamlLib().LineCounter)();
