import { readFileSync } from "node:fs";
import { AgentError } from "../errors/agent-error.js";
import { sleep } from "../util/abortable.js";
import type { FinishReason, Model, ModelRequest, ModelResponse, ModelStreamEvent, RawToolCall, Usage } from "./model.js";

/** One scripted tool call: parsed input, or raw argument text (to script invalid JSON). */
export type ScriptedToolCall = { name: string; input: unknown; id?: string } | { name: string; rawArguments: string; id?: string };

/** One step of a script: what the model does on one call. */
export interface ScriptedStep {
  /** Text streamed as several deltas. */
  text?: string;
  /** Reasoning text streamed before the answer. */
  thinking?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default "tool_calls" when there are calls, else "stop". */
  finishReason?: FinishReason;
  usage?: Usage;
  /** The request fails with this error (after `delayMs` and any text). */
  error?: { status: number; code?: string; message: string };
  /** Waits this long (abortably) before answering. */
  delayMs?: number;
}

/** A step, or a function of the request returning one. */
export type ScriptStep = ScriptedStep | ((request: ModelRequest) => ScriptedStep | Promise<ScriptedStep>);

export interface ScriptedModel extends Model {
  /** Model calls made so far. */
  readonly calls: number;
  /** The requests received, in order (what the engine sent). */
  readonly requests: readonly ModelRequest[];
}

const STEP_KEYS = new Set(["text", "thinking", "toolCalls", "finishReason", "usage", "error", "delayMs"]);

/**
 * A deterministic model for tests, demos and replay: plays its steps in order, one per model call. Past its last
 * step a call fails (`MODEL_SCRIPT_EXHAUSTED`).
 */
export function scriptedModel(steps: readonly ScriptStep[], options: { name?: string; contextWindow?: number } = {}): ScriptedModel {
  if (!Array.isArray(steps)) throw new AgentError("INVALID_SCRIPT", "scriptedModel expects an array of steps");
  steps.forEach((step, i) => {
    if (typeof step !== "function") checkStep(step, i);
  });
  const requests: ModelRequest[] = [];
  const model: ScriptedModel = {
    name: options.name ?? "script",
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    get calls() {
      return requests.length;
    },
    requests,
    stream(request, { signal }) {
      const index = requests.length;
      // The engine's message list grows after the call: keep the request as it was sent.
      requests.push({ ...request, messages: request.messages.slice() });
      return play(steps, index, request, signal);
    },
  };
  return model;
}

/** Loads a script from a JSON file: an array of steps, or `{ "steps": [...] }`. */
scriptedModel.fromFile = function fromFile(path: string, options: { name?: string } = {}): ScriptedModel {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch (error) {
    throw new AgentError("INVALID_SCRIPT", `cannot read script ${path}: ${(error as Error).message}`);
  }
  const steps = Array.isArray(parsed) ? parsed : (parsed as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) {
    throw new AgentError("INVALID_SCRIPT", `script ${path} must hold an array of steps or { "steps": [...] }`);
  }
  try {
    return scriptedModel(steps as ScriptedStep[], { name: options.name ?? `script:${path}` });
  } catch (error) {
    throw new AgentError("INVALID_SCRIPT", `script ${path}: ${(error as Error).message}`);
  }
};

function checkStep(step: unknown, i: number): asserts step is ScriptedStep {
  const where = `step ${i}`;
  if (step === null || typeof step !== "object" || Array.isArray(step)) throw new AgentError("INVALID_SCRIPT", `${where} must be an object`);
  const s = step as Record<string, unknown>;
  for (const key of Object.keys(s)) {
    if (!STEP_KEYS.has(key)) throw new AgentError("INVALID_SCRIPT", `${where}: unknown key "${key}" (known: ${[...STEP_KEYS].join(", ")})`);
  }
  if (s.text !== undefined && typeof s.text !== "string") throw new AgentError("INVALID_SCRIPT", `${where}: text must be a string`);
  if (s.thinking !== undefined && typeof s.thinking !== "string") throw new AgentError("INVALID_SCRIPT", `${where}: thinking must be a string`);
  if (s.delayMs !== undefined && (typeof s.delayMs !== "number" || s.delayMs < 0)) throw new AgentError("INVALID_SCRIPT", `${where}: delayMs must be a number ≥ 0`);
  if (s.toolCalls !== undefined) {
    if (!Array.isArray(s.toolCalls)) throw new AgentError("INVALID_SCRIPT", `${where}: toolCalls must be an array`);
    s.toolCalls.forEach((c: unknown, j: number) => {
      const call = c as Record<string, unknown> | null;
      if (!call || typeof call.name !== "string") throw new AgentError("INVALID_SCRIPT", `${where}, tool call ${j}: needs a "name" string`);
      if (!("input" in call) && typeof call.rawArguments !== "string") {
        throw new AgentError("INVALID_SCRIPT", `${where}, tool call ${j}: needs "input" (a value) or "rawArguments" (a string)`);
      }
    });
  }
  if (s.error !== undefined) {
    const e = s.error as Record<string, unknown> | null;
    if (!e || typeof e.status !== "number" || typeof e.message !== "string") {
      throw new AgentError("INVALID_SCRIPT", `${where}: error needs { status: number, message: string, code?: string }`);
    }
  }
  if (s.usage !== undefined) {
    const u = s.usage as Record<string, unknown> | null;
    if (!u || typeof u.input !== "number" || typeof u.output !== "number") throw new AgentError("INVALID_SCRIPT", `${where}: usage needs { input: number, output: number }`);
  }
}

async function* play(steps: readonly ScriptStep[], index: number, request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent> {
  if (index >= steps.length) {
    throw new AgentError(
      "MODEL_SCRIPT_EXHAUSTED",
      `the scripted model ran out of steps: it has ${steps.length} and was called a ${ordinal(index + 1)} time`,
    );
  }
  const entry = steps[index];
  const step = typeof entry === "function" ? await entry(request) : entry;
  if (typeof entry === "function") checkStep(step, index);
  if (step.delayMs) await sleep(step.delayMs, signal);
  if (signal.aborted) throw signal.reason;
  if (step.thinking) yield { type: "thinking_delta", text: step.thinking };
  const text = step.text ?? "";
  for (const piece of splitDeltas(text)) {
    if (signal.aborted) throw signal.reason;
    yield { type: "text_delta", text: piece };
  }
  if (step.error) {
    const code = step.error.code === "context_length_exceeded" ? "CONTEXT_OVERFLOW" : "MODEL_ERROR";
    const status = step.error.status;
    throw new AgentError(code, `model request failed (${status}${step.error.code ? ` ${step.error.code}` : ""}): ${step.error.message}`, {
      status,
      retryable: status === 408 || status === 409 || status === 429 || status >= 500,
    });
  }
  const toolCalls: RawToolCall[] = (step.toolCalls ?? []).map((c) => ({
    name: c.name,
    arguments: "rawArguments" in c ? c.rawArguments : JSON.stringify(c.input ?? {}),
    ...(c.id !== undefined ? { providerId: c.id } : {}),
  }));
  const response: ModelResponse = {
    text,
    toolCalls,
    finishReason: step.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
    ...(step.usage ? { usage: step.usage } : {}),
    ...(step.thinking ? { thinking: step.thinking } : {}),
  };
  yield { type: "response", response };
}

/** Splits text into word-sized deltas, as a streaming model would send it. */
function splitDeltas(text: string): string[] {
  if (text === "") return [];
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function ordinal(n: number): string {
  const suffix = n % 10 === 1 && n % 100 !== 11 ? "st" : n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : "th";
  return `${n}${suffix}`;
}
