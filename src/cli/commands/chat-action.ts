import { setupOutput, type CliContext } from "../context.js";
import { canAsk } from "../io.js";
import { streamLineSource, terminalLineSource } from "../line-source.js";
import { HumanRenderer } from "../render.js";
import { executeRun, traceFileOf } from "../run-agent.js";
import type { RunFlags } from "../run-flags.js";
import { closeAgent, headerLine, prepareAgent } from "./prepare-agent.js";
import { CHAT_HELP } from "./chat.js";

export interface ChatFlags extends RunFlags {
  color?: boolean;
}


/**
 * `statecraft chat`: a multi-turn session in the terminal. Each message is one run of the same session, so the
 * agent sees the whole conversation; a run stopped with Ctrl-C (user_abort) returns to the prompt.
 */
export async function chatAction(flags: ChatFlags, context: CliContext): Promise<number> {
  const { io } = context;
  const output = setupOutput(io, flags);
  const style = output.out;
  const prepared = await prepareAgent(flags, io, output.logger);
  const onTerminal = canAsk(io) && io.stdout.isTTY === true;
  const lines = onTerminal ? terminalLineSource(io) : streamLineSource(io);
  const say = (text: string) => io.stdout.write(`${text}\n`);
  let sessionId = prepared.params.sessionId;
  const traceFile = traceFileOf(prepared.params);

  say(headerLine(style, prepared));
  say(style.dim("type a request; /help for commands; /exit or Ctrl-C to leave"));
  try {
    for (;;) {
      const line = await lines.next(`${style.cyan("›")} `);
      if (line === null) break;
      const text = line.trim();
      if (!onTerminal) say(`${style.cyan("›")} ${line}`);
      if (text === "") continue;
      if (text.startsWith("/")) {
        const [name] = text.split(/\s+/);
        if (name === "/exit" || name === "/quit") break;
        if (name === "/help") say(CHAT_HELP);
        else if (name === "/session") {
          say(sessionId === undefined ? "no session yet: it starts with your first request" : `session ${sessionId}`);
          if (traceFile !== false) say(style.dim(`trace: ${traceFile}`));
        } else if (name === "/new") {
          sessionId = undefined;
          say("new session: the next request starts a fresh conversation");
        } else say(`unknown command ${name}; /help lists the commands`);
        continue;
      }
      const renderer = new HumanRenderer(io.stdout, { style, spinner: io.stdout.isTTY === true, thinking: io.stdout.isTTY === true });
      const outcome = await executeRun({
        prompt: line,
        params: { ...prepared.params, ...(sessionId !== undefined ? { sessionId } : {}) },
        model: prepared.created.model,
        tools: prepared.tools,
        io,
        renderer,
        json: false,
        errStyle: output.err,
        promptStyle: style,
        logger: output.logger,
      });
      sessionId = outcome.sessionId;
      say("");
    }
  } finally {
    lines.close();
    await closeAgent(prepared);
  }
  if (sessionId !== undefined) say(style.dim(`session ${sessionId}; continue it with: statecraft chat --session ${sessionId}`));
  return 0;
}

