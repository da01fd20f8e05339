import { scriptedModel } from "../../models/scripted.js";
import { builtinTools } from "../../tools/builtin/index.js";
import { demoDecision } from "../../demo/policy.js";
import { DEMO_MODEL_NAME, demoScenarioFile, prepareDemoWorkspace } from "../../demo/workspace.js";
import { setupOutput, type CliContext } from "../context.js";
import { ANSWER_WORDS, describeRequest } from "../prompt.js";
import { HumanRenderer, JsonRenderer } from "../render.js";
import { executeRun } from "../run-agent.js";
import { shellQuote } from "../denial-notice.js";
import { commandName } from "../command-name.js";
import { UsageError } from "../usage-error.js";
import { tmpdir } from "node:os";

export interface DemoFlags {
  json?: boolean;
  logLevel?: string;
  color?: boolean;
}

export const DEMO_PROMPT = "The tests of this project fail. Find out why and fix it.";

/**
 * `statecraft demo`: the embedded default. Offline, no key: copies the bundled sample project into a new temporary
 * folder and plays the bundled script through the real engine and the real built-in tools.
 */
export async function demoAction(flags: DemoFlags, context: CliContext): Promise<number> {
  const { io } = context;
  const output = setupOutput(io, flags);
  const json = flags.json === true;
  const style = json ? output.err : output.out;
  const say = (text: string) => (json ? io.stderr : io.stdout).write(`${text}\n`);

  let dir: string;
  try {
    dir = prepareDemoWorkspace();
  } catch (error) {
    throw new UsageError(
      `can't create the demo's folder under ${tmpdir()}: ${(error as Error).message}; set TMPDIR to a folder you can write to`,
    );
  }
  output.logger.info({ dir }, "demo workspace prepared");
  const model = scriptedModel.fromFile(demoScenarioFile(), { name: DEMO_MODEL_NAME });
  const onTerminal = io.stdout.isTTY === true;
  const renderer = json
    ? new JsonRenderer(io.stdout)
    : new HumanRenderer(io.stdout, { style: output.out, spinner: onTerminal, thinking: onTerminal });

  say(style.bold("statecraft demo") + style.dim(" · offline: a scripted model, the real engine and the real built-in tools"));
  say(style.dim(`sample project copied to ${dir} (your own files are not touched)`));
  say(`${style.cyan("›")} ${DEMO_PROMPT}`);
  say("");

  const outcome = await executeRun({
    prompt: DEMO_PROMPT,
    params: { cwd: dir, permissions: { mode: "default", allow: [], ask: [], deny: [] } },
    model,
    tools: builtinTools(),
    io,
    renderer,
    json,
    errStyle: output.err,
    promptStyle: style,
    logger: output.logger,
    answer: (request) => {
      const decision = demoDecision(request);
      const word = ANSWER_WORDS[decision.answer];
      say(describeRequest(request, style).join("\n"));
      say(
        `  ${style.magenta("demo policy:")} ${decision.answer === "deny" ? style.red(word) : style.green(word)} ${style.dim(
          `(${decision.why}; statecraft run would ask you: y/a/n)`,
        )}`,
      );
      return decision.answer;
    },
  });

  const trace = outcome.traceFile === false ? undefined : outcome.traceFile;
  say("");
  if (trace !== undefined) {
    say(`trace: ${trace}`);
    const statecraft = commandName(io.env);
    say(style.dim("look at the run with:"));
    say(`  ${statecraft} trace show ${shellQuote(trace)}`);
    say(`  ${statecraft} inspect ${shellQuote(trace)}`);
  }
  if (outcome.reason === "final_answer") say(style.dim(`the fixed sample is in ${dir}; run its tests with: cd ${shellQuote(dir)} && npm test`));
  return outcome.exitCode;
}

