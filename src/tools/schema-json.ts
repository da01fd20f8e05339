import { createRequire } from "node:module";
import type { StandardJSONSchemaV1Props, StandardSchemaV1 } from "./standard-schema.js";

const require = createRequire(import.meta.url);

/**
 * The JSON Schema a Standard Schema's own library makes of what it accepts (its input side: the model writes the
 * value the schema then parses). In order: the Standard JSON Schema interface (zod 4.2+, arktype 2.1.28+), arktype's
 * `toJsonSchema()`, then the library's converter by vendor: `@valibot/to-json-schema` for valibot, `toJSONSchema` of
 * zod for older zod 4 lines. Converters are optional peer dependencies, loaded the first time a schema needs one
 * (`require`, as ajv is, so that `defineTool` stays synchronous; both ship CommonJS builds).
 * Throws an Error saying why when the schema cannot be converted (a Date, a function, a custom check, …).
 */
export function standardToJsonSchema(schema: StandardSchemaV1): Record<string, unknown> {
  const props = schema["~standard"] as StandardSchemaV1["~standard"] & Partial<StandardJSONSchemaV1Props>;
  if (props.jsonSchema && typeof props.jsonSchema.input === "function") {
    return props.jsonSchema.input({ target: "draft-2020-12" });
  }
  const own = (schema as { toJsonSchema?: unknown }).toJsonSchema;
  if (typeof own === "function") return (own as () => Record<string, unknown>).call(schema);
  switch (props.vendor) {
    case "valibot": {
      const { toJsonSchema } = load<typeof import("@valibot/to-json-schema")>("@valibot/to-json-schema", "valibot");
      return toJsonSchema(schema as Parameters<typeof toJsonSchema>[0], { target: "draft-2020-12", typeMode: "input" }) as Record<string, unknown>;
    }
    case "zod": {
      const { toJSONSchema } = load<{ toJSONSchema: (schema: unknown, options: Record<string, unknown>) => Record<string, unknown> }>("zod", "zod");
      return toJSONSchema(schema, { io: "input" });
    }
    default:
      throw new Error(
        `its library ("${props.vendor}") gives no JSON Schema for the model: use a library that implements Standard JSON Schema ` +
          `(https://standardschema.dev/json-schema), or pass a JSON Schema object`,
      );
  }
}

function load<T>(name: string, library: string): T {
  try {
    return require(name) as T;
  } catch (error) {
    if ((error as { code?: string }).code === "MODULE_NOT_FOUND") {
      throw new Error(`turning a ${library} schema into JSON Schema needs the package "${name}": npm install ${name}`);
    }
    throw error;
  }
}
