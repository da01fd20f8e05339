import { join } from "node:path";
import ts from "typescript";

const root = join(import.meta.dirname, "..", "..");
export const dist = join(root, "dist");

/** The built package's entry declarations, as a consumer imports them. */
export const ENTRIES = ["index.d.ts", "debug/index.d.ts", "inspect/index.d.ts", "dbos/index.d.ts"].map((file) => join(dist, file));

/** A consumer's strict TypeScript file that imports the package by its name (test/types/fixtures/consumer.ts). */
export const CONSUMER = join(import.meta.dirname, "fixtures", "consumer.ts");
/** The same consumer's tools over zod, valibot and arktype schemas (test/types/fixtures/schemas.ts). */
export const SCHEMA_CONSUMER = join(import.meta.dirname, "fixtures", "schemas.ts");

/** A strict consumer's settings (its tsconfig.json: the compiler options a new project starts from, strict on). */
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
  types: ["node"],
  noEmit: true,
  skipLibCheck: true,
};

let program: ts.Program | undefined;

/**
 * One TypeScript program over the package's declarations and the consumer file, built once for every check of this
 * file: building it is the slow part (seconds, more on a busy machine), and the checks only read it.
 */
export function packageProgram(): ts.Program {
  program ??= ts.createProgram([...ENTRIES, CONSUMER, SCHEMA_CONSUMER], OPTIONS);
  return program;
}

/** What tsc would print for the program: every error, file names relative to the package. */
export function diagnostics(of: ts.Program): string {
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(of), host);
}
