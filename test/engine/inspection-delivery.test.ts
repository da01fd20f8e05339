import { afterEach, describe, expect, it } from "vitest";
import { createActor, type AnyActorRef, type InspectionEvent } from "xstate";
import { scriptedModel, type ScriptStep } from "../../src/index.js";
import { engineMachine } from "../../src/machine/engine.js";
import { observeEngine, type InternalObserver } from "../../src/observers/observe.js";
import { prepare } from "../../src/query.js";
import { echoTool as echo, removeDir, tempDir, writeTool as write } from "../support/engine.js";

// observeEngine takes XState's inspection events straight from the actor's system instead of through the copy XState
// makes for each inspector (observe.ts, `deliverDirectly`). What the observers hear must not depend on which way the
// events came.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** Everything an observer can tell of a run: each state with where it came from and why, each emitted event, the context each saw. */
function recorder() {
  const heard: string[] = [];
  const observer: InternalObserver = {
    state: (entered) =>
      heard.push(`state ${entered.state} from ${entered.from} on ${entered.event.type} turn ${entered.context.turn} messages ${entered.context.messages.length} batch ${entered.context.batch.map((r) => r.status).join(",")}`),
    emitted: (event, context) => heard.push(`emitted ${event.type} batch ${context.batch.map((r) => r.status).join(",")}`),
  };
  return { heard, observer };
}

type Delivery = "direct" | "with another inspector" | "another inspector added at once";

/** Runs the engine machine on a fresh copy of the script, observed, and reports what the observer heard. */
async function observe(steps: ScriptStep[], delivery: Delivery): Promise<{ heard: string[]; other: InspectionEvent[]; system: unknown }> {
  const cwd = tempDir("statecraft-inspection-");
  dirs.push(cwd);
  const prepared = prepare("go", { model: scriptedModel(steps), tools: [echo, write], cwd, traceFile: false, permissions: { mode: "acceptEdits" } });
  const seen = recorder();
  const other: InspectionEvent[] = [];
  const actor = createActor(engineMachine, { input: prepared.input, inspect: observeEngine([seen.observer]) });
  if (delivery === "another inspector added at once") actor.system.inspect((event) => void other.push(event));
  await new Promise<void>((resolve) => {
    actor.subscribe({
      next: (snapshot) => {
        // Halfway through the run, as a debugging tool might.
        if (delivery === "with another inspector" && other.length === 0 && snapshot.context.turn === 2) actor.system.inspect((event) => void other.push(event));
      },
      complete: () => resolve(),
      error: () => resolve(),
    });
    actor.start();
  });
  return { heard: seen.heard, other, system: actor.system };
}

const SCRIPT: ScriptStep[] = [
  { toolCalls: [{ name: "echo", input: { text: "a" } }, { name: "write", input: { text: "x" } }] },
  { toolCalls: [{ name: "echo", input: { text: "boom" } }, { name: "nope", input: {} }] },
  { text: "Done." },
];

describe("observeEngine's delivery of XState's inspection events", () => {
  it("replaces the copying delivery of the actor's system when it is the actor's only inspector", async () => {
    const { system } = await observe(SCRIPT, "direct");
    const cwd = tempDir("statecraft-inspection-");
    dirs.push(cwd);
    const plain = createActor(engineMachine, { input: prepare("go", { model: scriptedModel([{ text: "x" }]), cwd, traceFile: false }).input });
    const deliver = (s: unknown) => String((s as { _sendInspectionEvent: unknown })._sendInspectionEvent);
    // XState's own copies each event with the root's id; the one installed does not (if XState renames its delivery,
    // this fails: the observers still work, through the copy, but the step is slower).
    expect(deliver((plain as AnyActorRef).system)).toContain("rootId");
    expect(deliver(system)).not.toContain("rootId");
  });

  it("tells the observers the same states, events and contexts as XState's own delivery, with another inspector added at once or midway", async () => {
    const direct = await observe(SCRIPT, "direct");
    const atOnce = await observe(SCRIPT, "another inspector added at once");
    const midway = await observe(SCRIPT, "with another inspector");
    expect(direct.heard.length).toBeGreaterThan(20);
    expect(direct.heard).toContain("emitted tool_result batch finished,finished");
    expect(atOnce.heard).toEqual(direct.heard);
    expect(midway.heard).toEqual(direct.heard);
    // The inspector added later hears XState's events as usual, each once, the root's own included.
    for (const { other } of [atOnce, midway]) {
      expect(other.length).toBeGreaterThan(20);
      expect(new Set(other).size).toBe(other.length);
      expect(other.every((event) => typeof event.rootId === "string")).toBe(true);
      expect(other.some((event) => event.type === "@xstate.microstep")).toBe(true);
    }
  });
});
