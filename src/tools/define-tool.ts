import type { FromSchema, JSONSchema } from "json-schema-to-ts";
import { AgentError } from "../errors/agent-error.js";
import type { ContentPartInput } from "../models/content.js";
import type { ToolCall } from "../models/messages.js";
import { standardToJsonSchema } from "./schema-json.js";
import { isStandardSchema, type InferSchemaOutput, type StandardSchemaV1 } from "./standard-schema.js";
import { compileInputValidator, standardInputValidator, type InputValidator } from "./validate.js";

export type ToolRisk = "read" | "write" | "exec";
export type ToolExecutionMode = "parallel" | "sequential";
/**
 * How permission rules match a tool's subject: `command` (shell command: `*` wildcards, compound commands split),
 * `path` (picomatch glob on the path relative to the workspace, symlinks followed), `text` (`*` wildcards).
 */
export type PermissionSubjectKind = "command" | "path" | "text";

/** What a tool's `execute` receives besides its input. */
export interface ToolContext {
  /** Aborts when the run is aborted, times out, or the tool's own `timeoutMs` passes. Honour it. */
  signal: AbortSignal;
  /** The run's working directory (the workspace root for file tools). */
  cwd: string;
  sessionId: string;
  toolCallId: string;
  /** The run calling the tool: what a tool that starts a run of its own (a subagent) inherits. */
  run?: RunInfo;
  /** Tells the caller how far a long call has got: a `tool_progress` event (ignored once the call has ended). */
  progress?: (update: ToolProgress) => void;
}

/** How far a long tool call has got: `progress` of `total` (when known) steps, with an optional message. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a calling run passes on to a subagent: its limits left, its settings, and a way to report events up. */
export interface RunInfo {
  sessionId: string;
  /** 0 for a top run, 1 for a subagent, … */
  depth: number;
  /** The deepest level allowed in the whole tree (the top run's setting). */
  maxDelegationDepth: number;
  /** Epoch milliseconds at which the calling run times out. */
  deadline: number;
  /** Model calls and tool executions the calling run has left. */
  remainingTurns: number;
  remainingToolCalls: number;
  traceFile: string | false;
  permissions: import("../record/permission-options.js").PermissionOptions;
  model: import("../models/model.js").Model;
  /** Passes an event of a subagent up to the calling run's caller. */
  relay(event: import("../events.js").AgentEvent): void;
  /** The run's sandbox: what every process its tools start runs inside (a subagent's run inherits it). */
  sandbox?: import("../sandbox/index.js").RunSandbox;
  /**
   * Set when the calling run is hosted (statecraft/dbos): hosts a subagent's run the same way, before it starts
   * (`child` is the engine's prepared run, internal to it).
   */
  hostSubagent?: (child: unknown) => void;
  /**
   * The observers the calling run's own observers give a subagent started by this tool call (each an
   * EngineObserver, which this layer does not name).
   */
  observeSubagent?: (start: SubagentStart) => unknown[];
}

/** A subagent run about to start, as the calling run's observers hear of it (EngineObserver.subagent). */
export interface SubagentStart {
  /** The subagent run's own session. */
  sessionId: string;
  /** The calling run's session. */
  parentSession: string;
  /** The calling run's tool call that runs the subagent. */
  toolCallId: string;
  /** 1 for a subagent of a top run, 2 for its subagent, … */
  depth: number;
}

/**
 * A tool's result: plain text, or text flagged as an error the model should see as one, with optional `details`
 * (JSON data for the caller and the trace; the model sees only `content`). `content` may be parts (text and images,
 * e.g. a screenshot) for a model that takes them; the text parts are its text for the rest.
 */
export type ToolOutput = string | { content: string | readonly ContentPartInput[]; isError?: boolean; details?: Record<string, unknown> };

export interface ToolConfig<Input = Record<string, unknown>, Name extends string = string> {
  /** Letters, digits, `_` and `-`, at most 64 characters (what model APIs accept). */
  name: Name;
  /** Written for the model: what the tool does and when to use it. */
  description: string;
  /**
   * The input object's schema: a Standard Schema (zod 4, valibot 1, arktype 2, …), whose own `validate` parses the
   * input (transforms and defaults apply) and whose library makes the JSON Schema the model is sent; or a JSON Schema
   * object (draft-07, or 2020-12 when its `$schema` says so).
   */
  inputSchema: Record<string, unknown> | StandardSchemaV1;
  /** `read` tools are allowed by default; `write` and `exec` tools need permission. */
  risk: ToolRisk;
  /** Parallel tools of one response run concurrently; sequential ones one at a time, in order. Default from risk. */
  executionMode?: ToolExecutionMode;
  /** Per-call time limit; an overrunning call is aborted and the model is told it timed out. */
  timeoutMs?: number;
  /** Longer output is cut in the middle with a note. Default 30 000. */
  maxOutputChars?: number;
  /**
   * The text permission rules match for this call: the command for a shell tool, the path for a file tool.
   * Without it, rules of the form `Tool(pattern)` never match this tool (plain `Tool` rules still do).
   */
  permissionSubject?: (input: Input) => string | undefined;
  /** How `Tool(pattern)` rules match the subject. Default `text`. */
  permissionSubjectKind?: PermissionSubjectKind;
  execute: (input: Input, context: ToolContext) => Promise<ToolOutput> | ToolOutput;
}

/** A tool ready for the engine: its config plus the compiled input validator. */
export interface ToolDefinition<Input = Record<string, unknown>, Name extends string = string> extends ToolConfig<Input, Name> {
  /** The JSON Schema the model is sent (a Standard Schema's, as its library converts it). */
  readonly inputSchema: Record<string, unknown>;
  /** The Standard Schema the tool was defined with, when it was: it validates and parses the input. */
  readonly standardSchema?: StandardSchemaV1;
  readonly executionMode: ToolExecutionMode;
  readonly maxOutputChars: number;
  readonly validateInput: InputValidator;
}

/** Any tool, whatever its input type: what option lists accept. */
// The engine calls a tool only with input its schema validated, so the input type is the tool's own business.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any>;

/** A JSON Schema literal of an object (written inline, or `as const`): what `defineTool` infers the input type from. */
export type ObjectSchema = JSONSchema & { readonly type: "object" };

/** The input type a JSON Schema describes (json-schema-to-ts's `FromSchema`). */
export type SchemaInput<Schema> = Schema extends JSONSchema ? FromSchema<Schema> : never;

/**
 * The tool calls of a list of tools, one member per tool: `call.name === "x"` narrows `call.input` to tool x's input.
 * A list whose members are not known one by one (`AnyTool[]`, e.g. `builtinTools()`) gives plain `ToolCall`.
 */
export type ToolCallOf<Tools extends readonly AnyTool[]> = number extends Tools["length"]
  ? ToolCall
  : { [K in keyof Tools]: Tools[K] extends ToolDefinition<infer Input, infer Name> ? ToolCall<0 extends 1 & Input ? unknown : Input, Name> : never }[number];

export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The input type of a tool whose `inputSchema` is a Standard Schema: what the schema's validation outputs. */
export type StandardInput<Schema extends StandardSchemaV1> = InferSchemaOutput<Schema>;

/**
 * A tool's config whose `inputSchema` is a Standard Schema. `inputSchema` is left out of ToolConfig before it is added
 * back: comparing a library's schema type (arktype's is vast) with the JSON Schema side of ToolConfig's union is
 * work the compiler gives up on ("excessively deep").
 */
export type StandardToolConfig<Schema extends StandardSchemaV1, Name extends string = string> = Omit<ToolConfig<StandardInput<Schema>, Name>, "inputSchema"> & { inputSchema: Schema };

/**
 * Checks a tool's definition and compiles its schema once. Bad definitions throw `INVALID_TOOL` saying what to fix.
 * The input type comes from `inputSchema`: a Standard Schema's parsed output type (zod, valibot, arktype), or a JSON
 * Schema written inline (or `as const`); `defineTool<Input>(…)` names it instead (nothing checks that it matches the
 * schema then).
 */
export function defineTool<const Schema extends StandardSchemaV1<unknown, Record<string, unknown>>, const Name extends string>(
  config: StandardToolConfig<Schema, Name>,
): ToolDefinition<StandardInput<Schema>, Name>;
export function defineTool<const Schema extends ObjectSchema, const Name extends string>(
  config: ToolConfig<SchemaInput<Schema>, Name> & { inputSchema: Schema },
): ToolDefinition<SchemaInput<Schema>, Name>;
export function defineTool<Input = Record<string, unknown>, const Name extends string = string>(config: ToolConfig<Input, Name>): ToolDefinition<Input, Name>;
export function defineTool<Input>(config: ToolConfig<Input>): ToolDefinition<Input> {
  const name = (config as { name?: unknown }).name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new AgentError(
      "INVALID_TOOL",
      `tool name ${JSON.stringify(name)} is not valid: use 1-64 letters, digits, "_" or "-"`,
    );
  }
  if (typeof config.description !== "string" || config.description.trim() === "") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": description must be a non-empty string`);
  }
  if (config.risk !== "read" && config.risk !== "write" && config.risk !== "exec") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": risk must be "read", "write" or "exec", got ${JSON.stringify(config.risk)}`);
  }
  if (typeof config.execute !== "function") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": execute must be a function`);
  }
  const { schema, standard } = toolSchema(name, config.inputSchema);
  // Providers take a tool's input as one JSON object (function-calling parameters); any other schema is refused by the
  // server at the first model call, far from the mistake.
  if (schema.type !== "object") {
    throw new AgentError(
      "INVALID_TOOL",
      `tool "${name}": inputSchema must describe an object (type: "object"), got ${schema.type === undefined ? "a schema without a type" : `type ${JSON.stringify(schema.type)}`}; ` +
        (standard
          ? `wrap other input in an object, e.g. z.object({ items: ... })`
          : `wrap other input in a property, e.g. { type: "object", properties: { items: ${JSON.stringify(schema.type === undefined ? {} : { type: schema.type })} }, required: ["items"] }`),
    );
  }
  if (config.executionMode !== undefined && config.executionMode !== "parallel" && config.executionMode !== "sequential") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": executionMode must be "parallel" or "sequential"`);
  }
  const kind = config.permissionSubjectKind;
  if (kind !== undefined && kind !== "command" && kind !== "path" && kind !== "text") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": permissionSubjectKind must be "command", "path" or "text", got ${JSON.stringify(kind)}`);
  }
  if (config.permissionSubject !== undefined && typeof config.permissionSubject !== "function") {
    throw new AgentError("INVALID_TOOL", `tool "${name}": permissionSubject must be a function (input) => string | undefined`);
  }
  for (const key of ["timeoutMs", "maxOutputChars"] as const) {
    const value = config[key];
    if (value !== undefined && (typeof value !== "number" || !(value > 0))) {
      throw new AgentError("INVALID_TOOL", `tool "${name}": ${key} must be a positive number of ${key === "timeoutMs" ? "milliseconds" : "characters"}`);
    }
  }
  return {
    ...config,
    inputSchema: schema,
    ...(standard ? { standardSchema: standard } : {}),
    executionMode: config.executionMode ?? (config.risk === "read" ? "parallel" : "sequential"),
    maxOutputChars: config.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    validateInput: standard ? standardInputValidator(name, standard) : compileInputValidator(name, schema),
  };
}

/** The JSON Schema of a tool's input, and its Standard Schema when it was given one. */
function toolSchema(name: string, given: unknown): { schema: Record<string, unknown>; standard?: StandardSchemaV1 } {
  if (isStandardSchema(given)) {
    let schema: unknown;
    try {
      schema = standardToJsonSchema(given);
    } catch (error) {
      throw new AgentError("INVALID_TOOL", `tool "${name}": its ${given["~standard"].vendor} inputSchema cannot be turned into the JSON Schema the model is sent: ${(error as Error).message}`);
    }
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
      throw new AgentError("INVALID_TOOL", `tool "${name}": its ${given["~standard"].vendor} inputSchema gave no JSON Schema object for the model`);
    }
    return { schema: schema as Record<string, unknown>, standard: given };
  }
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    throw new AgentError(
      "INVALID_TOOL",
      `tool "${name}": inputSchema must be a Standard Schema (zod, valibot, arktype, …) or a JSON Schema object, e.g. z.object({ path: z.string() }) or { type: "object", properties: {} }`,
    );
  }
  return { schema: given as Record<string, unknown> };
}
