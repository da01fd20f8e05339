import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { AgentError } from "../errors/agent-error.js";
import { issuePath, type StandardSchemaIssue, type StandardSchemaResult, type StandardSchemaV1 } from "./standard-schema.js";

type AddFormats = (ajv: Ajv) => Ajv;
type Draft = "draft-07" | "2020-12";
const require = createRequire(import.meta.url);
const shared = new Map<Draft, Ajv>();

/**
 * One ajv instance per JSON Schema draft for all tool schemas, made by the first tool that needs it: ajv is some
 * seventy CommonJS modules, and loading them when statecraft is imported would cost every program, tools or not.
 * `require` keeps `defineTool` synchronous (ajv and ajv-formats are CommonJS). `coerceTypes` because real models send
 * numbers and booleans as strings; `useDefaults` so a schema's defaults reach the tool; `allErrors` so the model is
 * told everything at once. Draft 2020-12 (`prefixItems`, `unevaluatedProperties`, `$dynamicRef`) has its own class.
 */
function ajv(draft: Draft): Ajv {
  const made = shared.get(draft);
  if (made) return made;
  const AjvClass = draft === "2020-12" ? (require("ajv/dist/2020") as typeof import("ajv/dist/2020.js")).Ajv2020 : (require("ajv") as typeof import("ajv")).Ajv;
  const addFormats = require("ajv-formats") as AddFormats;
  const instance = new AjvClass({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false }) as Ajv;
  addFormats(instance);
  shared.set(draft, instance);
  return instance;
}

const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
/** Keywords only draft 2020-12 has: a schema without `$schema` that uses one is read as 2020-12. */
const ONLY_2020 = new Set(["prefixItems", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor", "dependentRequired", "dependentSchemas"]);

/** The draft a schema is written in: its `$schema` when it says, else draft-07 unless it uses a 2020-12 keyword. */
export function draftOf(schema: Record<string, unknown>): Draft {
  const declared = schema.$schema;
  if (typeof declared === "string") return DRAFT_2020.test(declared) ? "2020-12" : "draft-07";
  return usesKeyword(schema, ONLY_2020, 0) ? "2020-12" : "draft-07";
}

function usesKeyword(value: unknown, keywords: ReadonlySet<string>, depth: number): boolean {
  if (depth > 64 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((item) => usesKeyword(item, keywords, depth + 1));
  for (const [key, inner] of Object.entries(value)) {
    if (keywords.has(key) || usesKeyword(inner, keywords, depth + 1)) return true;
  }
  return false;
}

export type InputCheck = { ok: true; value: unknown } | { ok: false; message: string; fatal?: boolean };

export interface InputValidator {
  (input: unknown): InputCheck;
}

/** Compiles a tool's JSON Schema once. Throws `INVALID_TOOL` naming the tool when the schema is not valid. */
export function compileInputValidator(toolName: string, schema: Record<string, unknown>): InputValidator {
  let validate: ValidateFunction;
  try {
    validate = ajv(draftOf(schema)).compile(schema);
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

/**
 * A Standard Schema's own `validate` as the tool's validator: its transforms, defaults and refinements apply and the
 * tool receives the parsed value. The engine decides in one step whether a call may run, so a schema whose check is
 * asynchronous (an async refinement) cannot be waited for there: such a call ends the run with a fatal error that says
 * how to fix the schema, rather than running unchecked.
 */
export function standardInputValidator(toolName: string, schema: StandardSchemaV1): InputValidator {
  const props = schema["~standard"];
  return (input: unknown) => {
    let result: StandardSchemaResult<unknown> | Promise<StandardSchemaResult<unknown>>;
    try {
      result = props.validate(structuredCloneJson(input));
    } catch (error) {
      return { ok: false, message: `input: ${(error as Error).message}` };
    }
    if (result instanceof Promise) {
      result.catch(() => undefined);
      return {
        ok: false,
        fatal: true,
        message: `tool "${toolName}": its ${props.vendor} schema validates asynchronously (an async refinement or transform); tool input is checked synchronously: make the check synchronous, or do it inside execute`,
      };
    }
    if (result.issues) return { ok: false, message: describeIssues(result.issues) };
    return { ok: true, value: result.value };
  };
}

function structuredCloneJson(input: unknown): unknown {
  if (input === null || typeof input !== "object") return input;
  return JSON.parse(JSON.stringify(input)) as unknown;
}

/** A Standard Schema's issues in the same words as ajv's: `input.path: message`. */
export function describeIssues(issues: readonly StandardSchemaIssue[], root = "input"): string {
  return issues.map((issue) => `${issuePath(root, issue.path)}: ${issue.message}`).join("; ");
}

/** ajv's errors in words a model can act on: `input.path: must be integer`. */
export function describeErrors(errors: readonly ErrorObject[], root = "input"): string {
  return errors
    .map((e) => {
      const where = e.instancePath ? `${root}${e.instancePath.replace(/\//g, ".")}` : root;
      if (e.keyword === "additionalProperties") {
        return `${where}: unknown property "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
      }
      if (e.keyword === "unevaluatedProperties") {
        return `${where}: unknown property "${String((e.params as { unevaluatedProperty: string }).unevaluatedProperty)}"`;
      }
      if (e.keyword === "required") {
        return `${where}: missing required property "${String((e.params as { missingProperty: string }).missingProperty)}"`;
      }
      return `${where}: ${e.message ?? e.keyword}`;
    })
    .join("; ");
}
