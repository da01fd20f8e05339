import { outputRetryText } from "../../tools/output-schema.js";
import type { EngineContext } from "../context.js";

/**
 * validate_output: the model's last answer checked against the run's `output` schema. A match keeps the parsed value
 * (transforms applied); a mismatch keeps the errors, for the model or for the run's error.
 */
export function validateOutput(context: EngineContext): Partial<EngineContext> {
  const output = context.deps.output!;
  const attempts = (context.outcome.outputAttempts ?? 0) + 1;
  const checked = output.check(context.call.response?.text ?? context.outcome.finalText);
  const { output: _value, outputErrors: _errors, ...rest } = context.outcome;
  if (checked.ok) return { outcome: { ...rest, outputAttempts: attempts, output: checked.value } };
  return { outcome: { ...rest, outputAttempts: attempts, outputErrors: checked.message } };
}

/** The answer did not match and the run may ask again: the errors go back to the model as the user's next message. */
export function askOutputAgain(context: EngineContext): Partial<EngineContext> {
  return { messages: context.messages.append({ role: "user", content: outputRetryText(context.outcome.outputErrors ?? "it does not match") }) };
}
