// The engine machine run without query(), as the layer benches drive it: an actor of the machine (or of a variant
// made with provide()) on a prepared run's input, started, awaited until the run ends. Returns the final context.
import { createRequire } from "node:module";
import { engineMachine } from "../../dist/machine/engine.js";

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
