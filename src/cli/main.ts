#!/usr/bin/env node
// The `statecraft` executable (package.json "bin"): runs the command line and exits with its code.
import { drained, main } from "./cli.js";
import { OUTPUT_CLOSED } from "./interrupts.js";

// `statecraft … | head`: when the reader closes the pipe, a run in progress is stopped gracefully (its tools'
// processes ended, its trace closed) instead of the process dying on EPIPE; with no run listening, leave quietly.
let outputClosed = false;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  // Later writes fail the same way; the first one decides.
  if (outputClosed) return;
  outputClosed = true;
  if (process.listenerCount(OUTPUT_CLOSED) > 0) process.emit(OUTPUT_CLOSED as "SIGPIPE");
  else process.exit(0);
});

const code = await main(process.argv.slice(2));
process.exitCode = code;
await Promise.all([drained(process.stdout), drained(process.stderr)]);
process.exit(code);
