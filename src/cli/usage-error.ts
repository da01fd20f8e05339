/**
 * A mistake in how the command line was called (a bad flag value, no model configured, a missing file).
 * It ends the process with exit code 2 and its message on stderr, never with a stack trace.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
