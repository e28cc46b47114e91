/**
 * Placeholder: the model commands (encode, decode-model, verify) are owned by the encoder work,
 * which replaces this file. It registers nothing for now.
 */
import type { Command } from "commander";

export function registerModelCommands(_program: Command): void {}
