import { createRequire } from "node:module";
import type * as Commander from "commander";

// Required, not imported: Node's ES-module wrapper of commander's CommonJS files costs every start a lexer pass.
const commander = createRequire(import.meta.url)("commander") as typeof Commander;

export const { Argument, Command, CommanderError, InvalidArgumentError, Option } = commander;
export type Argument = Commander.Argument;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type InvalidArgumentError = Commander.InvalidArgumentError;
export type Option = Commander.Option;
