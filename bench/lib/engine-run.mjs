// The engine machine run without query(), as the layer benches drive it: an actor of the machine (or of a variant
// made with provide()) on a prepared run's input, started, awaited until the run ends. Returns the final context.
// And one run of a layer of bench/steps.mjs, the engine alone or through query().
import { createRequire } from "node:module";
import { query } from "../../dist/index.js";
import { engineMachine } from "../../dist/machine/engine.js";
import { observeEngine } from "../../dist/observers/observe.js";
import { prepare } from "../../dist/query.js";

// The engine's own copy of XState (bench/ has another, for the floor and the peers): an actor of the engine's machine
// must come from the same copy.
const { createActor } = createRequire(new URL("../../package.json", import.meta.url))("xstate");

/** @param input `prepare(...).input` @param options `inspect`: an XState inspection observer; `machine`: a variant */
export async function runEngine(input, { inspect, machine = engineMachine } = {}) {
  const actor = createActor(machine, inspect ? { input, inspect } : { input });
  await new Promise((resolve) => {
    actor.subscribe({ complete: resolve });
    actor.start();
  });
  return actor.getSnapshot().context;
}

/**
 * One run of a layer: `machine` (the engine alone), `observed` (+ observeEngine with empty observers) or any other
 * name for query() with `options` as given (the caller sets the trace file, the inspector …). Options are built by
 * the caller, outside whatever it times. @returns the run's tool calls
 */
export async function runLayer(layer, options) {
  if (layer === "machine" || layer === "observed") {
    const inspect = layer === "observed" ? observeEngine([{ state() {}, emitted() {} }]) : undefined;
    return (await runEngine(prepare("bench", options).input, { inspect })).toolCallCount;
  }
  let toolCalls;
  for await (const event of query("bench", options)) if (event.type === "turn_end") toolCalls = event.toolCalls;
  return toolCalls;
}
