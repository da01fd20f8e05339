import { readFileSync } from "node:fs";
import { AgentError } from "../errors/agent-error.js";
import type { Model, ModelRequest } from "../models/model.js";
import { scriptedModel, type ScriptedStep } from "../models/scripted.js";

/**
 * A script for workers: step n answers the run's n-th model call, counted from the request (the answers the model gave
 * since the run's prompt), not from the calls this process made. A worker that picks a run up halfway (after a
 * suspension or a crash) makes only the calls not recorded yet, and each still gets its own step.
 */
export function turnScript(steps: readonly ScriptedStep[], name = "script"): Model {
  scriptedModel(steps); // checks every step now
  return {
    name,
    async *stream(request: ModelRequest, options) {
      const lastUser = request.messages.map((m) => m.role).lastIndexOf("user");
      const turn = request.messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
      const step = steps[turn];
      if (step === undefined) throw new AgentError("MODEL_SCRIPT_EXHAUSTED", `script ${name} has ${steps.length} steps; the run asked for step ${turn + 1}`);
      yield* scriptedModel([step], { name }).stream(request, options);
    },
  };
}

/** turnScript of a script file (an array of steps, or { steps }), as `--model script:FILE` names one. */
export function turnScriptFile(path: string): Model {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch (error) {
    throw new AgentError("INVALID_SCRIPT", `cannot read script ${path}: ${(error as Error).message}`);
  }
  const steps = Array.isArray(parsed) ? parsed : (parsed as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) throw new AgentError("INVALID_SCRIPT", `script ${path} must hold an array of steps or { "steps": [...] }`);
  try {
    return turnScript(steps as ScriptedStep[], `script:${path}`);
  } catch (error) {
    throw new AgentError("INVALID_SCRIPT", `script ${path}: ${(error as Error).message}`);
  }
}
