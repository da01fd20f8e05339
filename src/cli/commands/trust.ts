import type { Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import type { TrustFlags } from "./trust-action.js";

/**
 * `statecraft trust [dir] [--list | --remove]`: the folders whose statecraft.config.json may decide what a cloned
 * repository's file may not (permission mode, allow rules, a server that gets your key), kept in the user config folder.
 */
export const trustCommand: CliCommand = {
  name: "trust",
  register(program: Command, context: CliContext) {
    program
      .command("trust")
      .description("trust a folder's statecraft.config.json: its permission mode, allow rules and baseUrl then apply")
      .argument("[dir]", "the folder (default: the current one); recorded by its real path")
      .option("--list", "print the trusted folders")
      .option("--remove", "stop trusting the folder")
      .addHelpText(
        "after",
        [
          "",
          "Without trust, a folder's statecraft.config.json may add deny and ask rules and set limits, but its permission",
          "mode and allow rules are shown and ignored, and its baseUrl never receives OPENAI_API_KEY. Trust is for that",
          "one folder, not its subfolders. The list: $XDG_CONFIG_HOME/statecraft/trusted-folders.json",
          "(default ~/.config/statecraft/trusted-folders.json). For one run only: run/chat --trust-project.",
        ].join("\n"),
      )
      .action(async (dir: string | undefined, flags: TrustFlags) => {
        const { trustAction } = await import("./trust-action.js");
        context.exitCode = trustAction(dir, flags, context);
      });
  },
};
