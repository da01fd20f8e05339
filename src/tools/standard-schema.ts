/**
 * Standard Schema v1 (https://standardschema.dev), the interface zod 4, valibot 1, arktype 2 and others implement.
 * The spec asks libraries to copy these types rather than depend on `@standard-schema/spec`, so a program using
 * statecraft needs no extra package to name them; they are kept identical to the spec's (a compile test checks it).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/** A Standard Schema's `~standard` properties: its version, vendor, `validate`, and (for the types) its types. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly validate: (value: unknown, options?: StandardSchemaOptions) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  readonly types?: StandardSchemaTypes<Input, Output> | undefined;
}

export interface StandardSchemaOptions {
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** What `validate` gives: the parsed value, or the issues. */
export type StandardSchemaResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export interface StandardSchemaTypes<Input = unknown, Output = Input> {
  readonly input: Input;
  readonly output: Output;
}

/** The type a Standard Schema's validation outputs (what a tool with that schema receives). */
export type InferSchemaOutput<Schema extends StandardSchemaV1> = NonNullable<Schema["~standard"]["types"]>["output"];

/**
 * Standard JSON Schema v1 (https://standardschema.dev/json-schema): a schema that converts itself to JSON Schema
 * (zod 4.2+, arktype 2.1.28+, valibot through `toStandardJsonSchema`).
 */
export interface StandardJSONSchemaV1Props {
  readonly jsonSchema: {
    readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
    readonly output: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
  };
}

/** Whether a value is a Standard Schema (zod, valibot, arktype, …): its `~standard` carries version 1 and `validate`. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  return props !== null && typeof props === "object" && (props as { version?: unknown }).version === 1 && typeof (props as { validate?: unknown }).validate === "function";
}

/** The path of a Standard Schema issue as the model reads it: `input.items.0.name` (`input` for the value itself). */
export function issuePath(root: string, path: StandardSchemaIssue["path"]): string {
  let where = root;
  for (const segment of path ?? []) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment;
    where += `.${String(key)}`;
  }
  return where;
}
