import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { AgentError } from "../errors/agent-error.js";

type AddFormats = (ajv: Ajv) => Ajv;
const require = createRequire(import.meta.url);
let shared: Ajv | undefined;

/**
 * One ajv instance for all tool schemas, made by the first tool defined: ajv is some seventy CommonJS modules, and
 * loading them when statecraft is imported would cost every program, tools or not. `require` keeps `defineTool`
 * synchronous (ajv and ajv-formats are CommonJS). `coerceTypes` because real models send numbers and booleans as
 * strings; `useDefaults` so a schema's defaults reach the tool; `allErrors` so the model is told everything at once.
 */
function ajv(): Ajv {
  if (shared) return shared;
  const { Ajv: AjvClass } = require("ajv") as typeof import("ajv");
  const addFormats = require("ajv-formats") as AddFormats;
  shared = new AjvClass({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
  addFormats(shared);
  return shared;
}

export type InputCheck = { ok: true; value: unknown } | { ok: false; message: string };

export interface InputValidator {
  (input: unknown): InputCheck;
}

/** Compiles a tool's JSON Schema once. Throws `INVALID_TOOL` naming the tool when the schema is not valid. */
export function compileInputValidator(toolName: string, schema: Record<string, unknown>): InputValidator {
  let validate: ValidateFunction;
  try {
    validate = ajv().compile(schema);
  } catch (error) {
    throw new AgentError(
      "INVALID_TOOL",
      `tool "${toolName}": inputSchema is not a valid JSON Schema: ${(error as Error).message}`,
    );
  }
  return (input: unknown) => {
    // Validation coerces in place; work on a copy so the recorded call keeps what the model sent.
    const value = structuredCloneJson(input);
    if (validate(value)) return { ok: true, value };
    return { ok: false, message: describeErrors(validate.errors ?? []) };
  };
}

function structuredCloneJson(input: unknown): unknown {
  if (input === null || typeof input !== "object") return input;
  return JSON.parse(JSON.stringify(input)) as unknown;
}

/** ajv's errors in words a model can act on: `input.path: must be integer`. */
export function describeErrors(errors: readonly ErrorObject[]): string {
  return errors
    .map((e) => {
      const where = e.instancePath ? `input${e.instancePath.replace(/\//g, ".")}` : "input";
      if (e.keyword === "additionalProperties") {
        return `${where}: unknown property "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
      }
      if (e.keyword === "required") {
        return `${where}: missing required property "${String((e.params as { missingProperty: string }).missingProperty)}"`;
      }
      return `${where}: ${e.message ?? e.keyword}`;
    })
    .join("; ");
}
