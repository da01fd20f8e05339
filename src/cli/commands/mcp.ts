import { InvalidArgumentError, type Command } from "commander";
import type { CliCommand, CliContext } from "../context.js";
import { addMcpFlag, addRunFlags, parsePort } from "../run-flags.js";
import type { McpLoginFlags, McpServeFlags } from "./mcp-actions.js";

function collectOrigin(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === "") throw new InvalidArgumentError("--allow-origin takes an origin such as http://localhost:5173.");
  return [...(previous ?? []), value];
}

/** `statecraft mcp serve` (the agent as an MCP server) and `statecraft mcp login <server>` (OAuth for an HTTP server). */
export const mcpCommand: CliCommand = {
  name: "mcp",
  register(program: Command, context: CliContext) {
    const mcp = program.command("mcp").description("MCP: serve this folder's agent as an MCP server, or log in to an HTTP MCP server that needs OAuth");
    const serve = mcp
      .command("serve")
      .description("serve the agent in --cwd as an MCP server with one tool, run_agent, over stdio (default) or Streamable HTTP on 127.0.0.1");
    addMcpFlag(addRunFlags(serve))
      .option("--http <port>", "serve Streamable HTTP on 127.0.0.1:<port> (0: a free one) instead of stdio", parsePort)
      .option("--token-file <file>", "with --http: the bearer token hosts must send, read from this file (made, 0600, with a new token when missing); else a new token is printed")
      .option("--allow-origin <origin>", "with --http: a browser origin allowed to call the server (repeatable)", collectOrigin)
      .option("--tool-name <name>", "the tool's name (default run_agent)")
      .option("--tool-description <text>", "the tool's description, which the host's model reads")
      .addHelpText(
        "after",
        [
          "",
          "A permission question goes to the host as an elicitation (allow once / deny) when it supports them; otherwise",
          "--permission-mode and --allow/--ask/--deny decide, and a question nobody can answer is denied.",
          "",
          "Examples:",
          "  claude mcp add statecraft -- statecraft mcp serve --cwd ~/project --allow 'bash(npm test)'",
          "  statecraft mcp serve --http 8765 --token-file ~/.statecraft/mcp-token",
        ].join("\n"),
      )
      .action(async (flags: McpServeFlags, cmd: Command) => {
        const { mcpServeAction } = await import("./mcp-actions.js");
        context.exitCode = await mcpServeAction({ ...cmd.optsWithGlobals(), ...flags }, context);
      });
    mcp
      .command("login")
      .description("log in to an HTTP MCP server of --mcp-config or .mcp.json that needs OAuth; its tokens are kept in your statecraft folder (0600)")
      .argument("<server>", "the server's name in the MCP configuration")
      .option("--cwd <dir>", "the folder whose .mcp.json names the server (default: here)")
      .option("--mcp-config <file>", "the MCP configuration naming the server")
      .option("--port <n>", "the local port the browser is sent back to (default: a free one)", parsePort)
      .action(async (server: string, flags: McpLoginFlags, cmd: Command) => {
        const { mcpLoginAction } = await import("./mcp-actions.js");
        context.exitCode = await mcpLoginAction(server, { ...cmd.optsWithGlobals(), ...flags }, context);
      });
  },
};
