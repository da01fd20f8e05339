import type { Readable, Writable } from "node:stream";

/** An output stream as the command line sees it: a terminal or anything else (pipe, file, test buffer). */
export interface OutputStream extends Writable {
  isTTY?: boolean;
  columns?: number;
}

/** An input stream that may be a terminal, in which case keys can be read one at a time. */
export interface InputStream extends Readable {
  isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
}

/** Where the command line reads and writes. `process` streams in the real program, buffers in unit tests. */
export interface CliIO {
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  env: NodeJS.ProcessEnv;
  /** The directory relative paths on the command line are resolved against. */
  cwd: string;
}

export function processIO(): CliIO {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** True when the person can be asked questions: keys come from a terminal. */
export function canAsk(io: CliIO): boolean {
  return io.stdin.isTTY === true && typeof io.stdin.setRawMode === "function";
}
