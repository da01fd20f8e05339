import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/tools/define-tool.js";
import { draftOf } from "../../src/tools/validate.js";

const tool = (inputSchema: Record<string, unknown>) => defineTool({ name: "t", description: "d", inputSchema, risk: "read", execute: () => "ok" });

describe("JSON Schema input schemas, draft-07 and 2020-12", () => {
  it("a 2020-12 schema ($schema, $defs/$ref, prefixItems, unevaluatedProperties) is compiled by the 2020-12 validator", () => {
    const t = tool({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
      properties: { at: { $ref: "#/$defs/point" } },
      required: ["at"],
      unevaluatedProperties: false,
    });
    expect(t.validateInput({ at: [1, 2] })).toEqual({ ok: true, value: { at: [1, 2] } });
    expect(t.validateInput({ at: ["1", 2] })).toEqual({ ok: true, value: { at: [1, 2] } }); // coerced, as models send numbers as text
    expect(t.validateInput({ at: [1, 2, 3] })).toEqual({ ok: false, message: "input.at: must NOT have more than 2 items" });
    expect(t.validateInput({ at: [1, 2], extra: true })).toEqual({ ok: false, message: 'input: unknown property "extra"' });
    expect(t.validateInput({ at: ["x", 2] })).toMatchObject({ ok: false, message: "input.at.0: must be number" });
  });

  it("zod's own z.toJSONSchema() output (2020-12) is accepted as a JSON Schema", () => {
    const schema = z.toJSONSchema(z.object({ city: z.string(), days: z.number().int().optional() }));
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    // As written to a file or sent by a server: plain JSON, read by ajv's 2020-12 class.
    const t = tool(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>);
    expect(t.standardSchema).toBeUndefined();
    expect(t.validateInput({ city: "Oslo" })).toEqual({ ok: true, value: { city: "Oslo" } });
    expect(t.validateInput({ days: 2 })).toEqual({ ok: false, message: 'input: missing required property "city"' });
    // The object zod returns also carries zod's own `~standard` (not enumerable): then zod validates it.
    const direct = tool(schema as Record<string, unknown>);
    expect(direct.inputSchema).toMatchObject({ type: "object", required: ["city"] });
    expect(direct.validateInput({ days: 2 })).toEqual({ ok: false, message: "input.city: Invalid input: expected string, received undefined" });
  });

  it("a draft-07 schema keeps draft-07 meaning (definitions, items as a list)", () => {
    const t = tool({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { name: { type: "string", minLength: 2 } },
      properties: { pair: { type: "array", items: [{ $ref: "#/definitions/name" }, { type: "integer" }], additionalItems: false } },
      required: ["pair"],
    });
    expect(t.validateInput({ pair: ["ab", 3] })).toEqual({ ok: true, value: { pair: ["ab", 3] } });
    expect(t.validateInput({ pair: ["a", 3] })).toEqual({ ok: false, message: "input.pair.0: must NOT have fewer than 2 characters" });
    expect(t.validateInput({ pair: ["ab", 3, 4] })).toEqual({ ok: false, message: "input.pair: must NOT have more than 2 items" });
  });

  it("the draft is the one $schema names; without one, a 2020-12-only keyword means 2020-12", () => {
    expect(draftOf({ $schema: "https://json-schema.org/draft/2020-12/schema" })).toBe("2020-12");
    expect(draftOf({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("draft-07");
    expect(draftOf({ type: "object", properties: { a: { type: "array", prefixItems: [{ type: "string" }] } } })).toBe("2020-12");
    expect(draftOf({ type: "object", unevaluatedProperties: false })).toBe("2020-12");
    expect(draftOf({ type: "object", properties: { a: { type: "string" } } })).toBe("draft-07");
    const t = tool({ type: "object", properties: { a: { type: "array", prefixItems: [{ type: "string" }], items: false } } });
    expect(t.validateInput({ a: ["x", "y"] })).toEqual({ ok: false, message: "input.a: must NOT have more than 1 items" });
  });

  it("a schema no draft accepts is INVALID_TOOL naming the tool", () => {
    expect(() => tool({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { a: { $ref: "#/$defs/missing" } } })).toThrow(
      /tool "t": inputSchema is not a valid JSON Schema: .*missing/,
    );
  });
});
