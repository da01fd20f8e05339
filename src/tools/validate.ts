import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { AgentError } from "../errors/agent-error.js";

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

/**
 * One ajv instance for all tool schemas. `coerceTypes` because real models send numbers and booleans as strings;
 * `useDefaults` so a schema's defaults reach the tool; `allErrors` so the model is told everything at once.
 */
const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
addFormats(ajv);

export type InputCheck = { ok: true; value: unknown } | { ok: false; message: string };

export interface InputValidator {
  (input: unknown): InputCheck;
}

/** Compiles a tool's JSON Schema once. Throws `INVALID_TOOL` naming the tool when the schema is not valid. */
export function compileInputValidator(toolName: string, schema: Record<string, unknown>): InputValidator {
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
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
