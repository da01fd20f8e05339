import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";
import { makeDirectory } from "../util/make-dir.js";
import { UsageError } from "./usage-error.js";

/**
 * Makes sure the run's trace file can be written before the run starts: its folder is found or created, and it and
 * the file (when it exists) are writable. A path that can't be (`/proc/1/nope/x`, a folder that is a file, a
 * read-only mount) is a usage error, exit 2, instead of a run whose trace goes missing.
 */
export function checkTraceTarget(file: string): void {
  try {
    const folder = dirname(file);
    makeDirectory(folder);
    accessSync(folder, constants.W_OK);
    let isFolder = false;
    try {
      isFolder = statSync(file).isDirectory();
    } catch {
      return; // not there yet: the writable folder gets it
    }
    if (isFolder) throw new Error(`${file} is a folder`);
    accessSync(file, constants.W_OK);
  } catch (error) {
    throw new UsageError(`cannot write the trace to ${file}: ${(error as Error).message}. Pass --trace <file> in a folder you can write, or --no-trace.`);
  }
}
