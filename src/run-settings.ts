import type { BlobStore } from "./record/blobs.js";
import type { createActor } from "xstate";
import type { Effects } from "./actors/effects.js";
import type { engineMachine } from "./machine/engine.js";
import type { EngineInput } from "./machine/context.js";
import type { LineSink } from "./record/jsonl-writer.js";
import type { RecordedSettings, TracedRunOptions } from "./record/settings-record.js";
import { isHttpUrl, type RunStore, type StoredSettings } from "./durable/run-store.js";

/**
 * A run's settings, checked: what `prepare()` makes of query()'s options and what every later step reads. The data
 * part is `recorded`, once; the engine's input is built from it and the run's collaborators (model, tools, hooks, the
 * permission policy, built once, in `input.deps.policy`). What a durable run stores and what the trace records are
 * derived from it (`storedSettingsOf`, `tracedOptionsOf`), never kept beside it.
 */
export interface RunSettings {
  /** What the engine machine starts with. */
  input: EngineInput;
  /** The settings that are plain data: the one serialisable part. */
  recorded: RecordedSettings;
  traceFile: string | false;
  /** The run continues a session: the caller named it, or the run is a session's. */
  continued: boolean;
  /** The run's queue modes were given (a session's run): the trace records them. */
  queueModes: boolean;
  forkedAt?: { sessionId: string; seq: number };
  /** The caller gave the conversation to start from (a message list): the transcript records it whole. */
  givenHistory?: true;
  /** A resumed run (resume.ts): where its trace goes on, the `resumed` line, and the run store it came from. */
  resumed?: { seq: number; fields: Record<string, unknown>; store: RunStore; release: () => Promise<void>; recovered: boolean };
  /** A run hosted by another engine (statecraft/dbos): its effects, and where its lines go. */
  hosted?: HostedRun;
}

/**
 * What a host (statecraft/dbos) changes in a run: the effects (each a durable step there), and the trace, transcript
 * and audit lines written to its sinks instead of files. A hosted run keeps no checkpoints of its own: the host's
 * journal is what recovers it.
 */
export interface HostedRun {
  /** Default: the engine's own (a subagent of a hosted run runs inside its parent's tool step, journalled as one). */
  effects?: Effects;
  sinks: { trace: LineSink; transcript: LineSink; audit: LineSink };
  /** Where the lines' images and files go, named by hash; without it they are written into the lines (statecraft/dbos). */
  blobs?: BlobStore;
  /** The host's time for the machine (its deadline and `timedOut` guard) and the clock its timers go through. */
  time?: { machine: Omit<Parameters<typeof engineMachine.provide>[0], "actors">; clock: NonNullable<Parameters<typeof createActor>[1]>["clock"] };
}

/** What the run store keeps of the run's settings, so that resume() starts it again the same way. */
export function storedSettingsOf(settings: RunSettings): StoredSettings {
  const { input, recorded } = settings;
  const model = input.deps.model;
  const { permissions, ...limits } = recorded;
  return {
    userInput: input.userInput,
    ...limits,
    ...(model.name !== undefined ? { model: model.name } : {}),
    ...(isHttpUrl(model.baseUrl) ? { baseUrl: model.baseUrl, keySent: model.sendsKey === true, ...(model.provider !== undefined ? { provider: model.provider } : {}) } : {}),
    traceFile: settings.traceFile,
    permissions: { ...permissions, allow: [...permissions.allow], ask: [...permissions.ask], deny: [...permissions.deny] },
  };
}

/** The run's options as its trace's first line records them (docs/trace.md; the fields of old traces, unchanged). */
export function tracedOptionsOf(settings: RunSettings): TracedRunOptions {
  const { input, recorded } = settings;
  const { loop, deps } = input;
  const { whenUnanswered, ...rules } = recorded.permissions;
  return {
    ...(deps.model.name !== undefined ? { model: deps.model.name } : {}),
    maxTurns: recorded.maxTurns,
    maxToolCalls: recorded.maxToolCalls,
    timeoutMs: recorded.timeoutMs,
    cwd: input.cwd,
    ...(recorded.systemPrompt !== undefined ? { systemPrompt: recorded.systemPrompt } : {}),
    ...(settings.continued ? { continued: true as const } : {}),
    ...(loop.contextWindow > 0 ? { contextWindow: loop.contextWindow, reserveTokens: loop.reserveTokens, keepRecentTokens: loop.keepRecentTokens } : {}),
    maxRepeatedCalls: loop.maxRepeatedCalls,
    ...(settings.queueModes ? { steeringMode: loop.steeringMode, followUpMode: loop.followUpMode } : {}),
    ...(loop.maxTokens !== undefined ? { maxTokens: loop.maxTokens } : {}),
    ...(loop.depth > 0 ? { depth: loop.depth } : {}),
    maxDelegationDepth: loop.maxDelegationDepth,
    hooks: Object.keys(deps.hooks),
    permissions: { ...rules, onAsk: deps.permissions.onAsk !== undefined, ...(whenUnanswered !== undefined ? { whenUnanswered } : {}) },
    ...(deps.output ? { output: deps.output.request.schema, outputRetries: deps.output.retries } : {}),
    tools: [...deps.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      risk: t.risk,
      executionMode: t.executionMode,
      ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    })),
  };
}
