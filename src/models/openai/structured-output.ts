import type { OutputRequest } from "../model.js";
import { outputInstructions } from "../output.js";
import type { WireMessage, WireRequestBody } from "./wire-types.js";

/**
 * A run's `output` on the Chat Completions wire. An object schema goes as `response_format: { type: "json_schema",
 * json_schema: { name, schema, strict } }` (strict only when the schema keeps strict mode's rules, which OpenAI
 * enforces); `response_format` takes objects only, so an array or a primitive, or a server set to
 * `structuredOutput: "instructions"`, gets the schema in the system message instead.
 */
export function applyOutput(body: WireRequestBody, output: OutputRequest, mode: "json_schema" | "instructions"): void {
  if (mode === "json_schema" && output.schema.type === "object") {
    // `$schema` names the draft for validators; OpenAI's strict mode refuses keys it does not know.
    const { $schema: _draft, ...schema } = output.schema;
    body.response_format = { type: "json_schema", json_schema: { name: output.name, schema, strict: output.strict } };
    return;
  }
  body.messages = withInstructions(body.messages, outputInstructions(output));
}

function withInstructions(messages: WireMessage[], text: string): WireMessage[] {
  const first = messages[0];
  if (first?.role === "system") return [{ role: "system", content: `${first.content}\n\n${text}` }, ...messages.slice(1)];
  return [{ role: "system", content: text }, ...messages];
}
