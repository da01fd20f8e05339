import { createActor, type InspectionEvent } from "xstate";
import { defineTool } from "../../../src/index.js";
import { engineMachine } from "../../../src/machine/engine.js";
import type { EngineInput } from "../../../src/machine/context.js";

/** A read tool that fails on "boom", and a write tool: the runs these tests inspect use both. */
export const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  risk: "read",
  execute: (input: { text: string }) => {
    if (input.text === "boom") throw new Error("echo broke");
    return `echo: ${input.text}`;
  },
});
export const note = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: () => "noted",
});

/** Runs the engine machine alone on a prepared run's input, inspected, until it ends (done or failed). */
export async function runInspected(input: EngineInput, inspect: (event: InspectionEvent) => void): Promise<void> {
  const actor = createActor(engineMachine, { input, inspect });
  await new Promise<void>((resolve) => {
    actor.subscribe({ complete: () => resolve(), error: () => resolve() });
    actor.start();
  });
}
