import type { InputStream } from "./io.js";
import { UsageError } from "./usage-error.js";

/** Reads all of stdin as text. */
export async function readAll(input: InputStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The prompt of `run`: the arguments joined by spaces, or, with none, all of stdin. With neither (or only spaces) it
 * is a usage error; a terminal on stdin with no argument is one too (nothing would end the input).
 */
export async function readPrompt(args: readonly string[], stdin: InputStream): Promise<string> {
  const fromArgs = args.join(" ");
  if (args.length > 0) {
    if (fromArgs.trim() === "") throw new UsageError('the prompt is empty; say what the agent should do, e.g. statecraft run "fix the failing test"');
    return fromArgs;
  }
  if (stdin.isTTY) {
    throw new UsageError('no prompt: give it as an argument (statecraft run "fix the failing test") or on stdin (echo "..." | statecraft run)');
  }
  const text = await readAll(stdin);
  if (text.trim() === "") throw new UsageError('no prompt: stdin was empty; give the prompt as an argument or pipe it in (echo "..." | statecraft run)');
  return text.replace(/\r?\n$/, "");
}
