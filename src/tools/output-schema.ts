import type { FromSchema, JSONSchema } from "json-schema-to-ts";
import { AgentError } from "../errors/agent-error.js";
import type { OutputRequest } from "../models/model.js";
import { standardToJsonSchema } from "./schema-json.js";
import { isStandardSchema, type InferSchemaOutput, type StandardSchemaV1 } from "./standard-schema.js";
import { compileInputValidator, standardInputValidator, type InputCheck } from "./validate.js";

/** The shape of a run's final answer: a Standard Schema (zod, valibot, arktype, …) or a JSON Schema object. */
export type OutputSchema = StandardSchemaV1 | Record<string, unknown>;

/** The type of `result.output` for a run's `output` schema: the Standard Schema's parsed output, or the JSON Schema's. */
export type OutputOf<Schema> = [Schema] extends [undefined]
  ? undefined
  : Schema extends StandardSchemaV1
    ? InferSchemaOutput<Schema>
    : Schema extends JSONSchema
      ? FromSchema<Schema>
      : unknown;

/** A run's output schema made ready: what the model is asked for, and the check of its answer. */
export interface CompiledOutput {
  request: OutputRequest;
  /** Checks the answer's text: JSON that matches the schema (the parsed value, transforms applied), or the errors. */
  check(text: string): InputCheck;
}

/** Compiles `query()`'s `output` option once. A schema that cannot be used throws `INVALID_OPTIONS` saying why. */
export function compileOutput(schema: OutputSchema): CompiledOutput {
  const fail = (why: string) => new AgentError("INVALID_OPTIONS", `options.output: ${why}`);
  let json: Record<string, unknown>;
  let validate: (value: unknown) => InputCheck;
  if (isStandardSchema(schema)) {
    try {
      json = standardToJsonSchema(schema);
    } catch (error) {
      throw fail(`its ${schema["~standard"].vendor} schema cannot be turned into the JSON Schema the model is asked for: ${(error as Error).message}`);
    }
    const standard = standardInputValidator("output", schema);
    validate = (value) => {
      const checked = standard(value);
      return checked.ok || checked.fatal ? checked : { ok: false, message: checked.message.replace(/^input/, "output").replace(/; input/g, "; output") };
    };
  } else if (schema !== null && typeof schema === "object" && !Array.isArray(schema)) {
    json = schema;
    let compiled: ReturnType<typeof compileInputValidator>;
    try {
      compiled = compileInputValidator("output", schema);
    } catch (error) {
      throw fail((error as Error).message.replace(/^tool "output": inputSchema/, "the schema"));
    }
    validate = (value) => {
      const checked = compiled(value);
      return checked.ok ? checked : { ok: false, message: checked.message.replace(/(^|; )input/g, "$1output") };
    };
  } else {
    throw fail("must be a Standard Schema (zod, valibot, arktype, …) or a JSON Schema object, e.g. z.object({ title: z.string() })");
  }
  return {
    request: { schema: json, name: typeof json.title === "string" && /^[\w-]{1,64}$/.test(json.title) ? json.title : "final_answer", strict: isStrict(json) },
    check(text) {
      let value: unknown;
      try {
        value = JSON.parse(stripFence(text)) as unknown;
      } catch (error) {
        return { ok: false, message: `the answer is not JSON (${(error as Error).message}): answer with the JSON value only` };
      }
      return validate(value);
    },
  };
}

/** A model that wraps its JSON in a Markdown code fence still answered in JSON. */
function stripFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return fenced ? fenced[1] : text;
}

/**
 * Whether a schema meets the strict structured-output rules (OpenAI's): every object lists all its properties as
 * required and allows no others; composition keywords other than `anyOf` are not allowed.
 */
export function isStrict(schema: unknown, depth = 0): boolean {
  if (depth > 64 || schema === null || typeof schema !== "object") return true;
  if (Array.isArray(schema)) return schema.every((s) => isStrict(s, depth + 1));
  const s = schema as Record<string, unknown>;
  if ("allOf" in s || "oneOf" in s || "not" in s || "if" in s || "patternProperties" in s) return false;
  const isObject = s.type === "object" || (Array.isArray(s.type) && s.type.includes("object")) || "properties" in s;
  if (isObject) {
    const keys = Object.keys((s.properties as Record<string, unknown> | undefined) ?? {});
    const required = Array.isArray(s.required) ? (s.required as unknown[]) : [];
    if (s.additionalProperties !== false || keys.some((k) => !required.includes(k))) return false;
  }
  for (const [key, value] of Object.entries(s)) {
    if (key === "enum" || key === "const" || key === "default" || key === "examples") continue;
    if (value !== null && typeof value === "object" && !isStrict(value, depth + 1)) return false;
  }
  return true;
}

/** What the model is told when its answer did not match: the errors, and to answer again. */
export function outputRetryText(errors: string): string {
  return `Your final answer does not match the required JSON Schema: ${errors}. Answer again with only the corrected JSON value.`;
}
