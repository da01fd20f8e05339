#!/usr/bin/env node
// The `statecraft` executable (package.json "bin"): runs the command line and exits with its code.
import { drained, main } from "./cli.js";

const code = await main(process.argv.slice(2));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
process.exit(code);
