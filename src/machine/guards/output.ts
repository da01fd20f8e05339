/** The run asks for its final answer in a shape (`output`): the answer goes through validate_output. */
export function outputRequested(context: { output?: unknown }): boolean {
  return context.output !== undefined;
}

/** The answer validate_output just checked matched the schema. */
export function outputValid(outcome: { outputErrors?: string; outputAttempts?: number }): boolean {
  return (outcome.outputAttempts ?? 0) > 0 && outcome.outputErrors === undefined;
}

/** Every answer allowed has been checked: the first, and `retries` more. */
export function outputRetriesSpent(outcome: { outputAttempts?: number }, retries: number): boolean {
  return (outcome.outputAttempts ?? 0) > retries;
}
