import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { addMcpFlag, addRunFlags } from "../run-flags.js";
import type { ChatFlags } from "./chat-action.js";

export const CHAT_HELP = [
  "Type a request and press Enter; the agent works on it in the working folder, remembering the conversation.",
  "  Ctrl-C        while the agent works: stop that run and come back here",
  "  Ctrl-C, /exit at the prompt: leave (Ctrl-D too)",
  "  /session      show the session id (continue later with: statecraft chat --session <id>)",
  "  /new          start a new session (a fresh conversation)",
  "  /help         this help",
].join("\n");

export const chatCommand: CliCommand = {
  name: "chat",
  register(program: Command, context: CliContext) {
    const command = program
      .command("chat")
      .description("a multi-turn session in the terminal: each message is a run of the same session");
    addMcpFlag(addRunFlags(command))
      .addHelpText("after", `\nIn the chat:\n${CHAT_HELP}`)
      .action(async (flags: ChatFlags, cmd: Command) => {
        const { chatAction } = await import("./chat-action.js");
        context.exitCode = await chatAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
