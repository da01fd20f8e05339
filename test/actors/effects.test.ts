import { describe, expect, it } from "vitest";
import { createActor, sendTo, setup, type AnyEventObject } from "xstate";
import { defaultEffects, effectsActor, isResultOf, type EffectRequest, type Effects } from "../../src/actors/effects.js";

/** A parent that invokes the effects actor and records every event it gets back. */
function harness(effects: Partial<Effects>) {
  const received: AnyEventObject[] = [];
  const machine = setup({
    types: { events: {} as AnyEventObject },
    actors: { effects: effectsActor({ ...defaultEffects, ...effects }) },
  }).createMachine({
    invoke: { id: "effects", src: "effects" },
    on: {
      "*": { actions: ({ event }) => received.push(event) },
      forward: { actions: sendTo("effects", ({ event }) => event.request as EffectRequest) },
    },
  });
  const actor = createActor(machine).start();
  const ask = (request: EffectRequest) => actor.send({ type: "forward", request });
  return { actor, received, ask };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const deferred = <T>() => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe("effectsActor", () => {
  it("ends a piece of work with <name>.done and its output, or <name>.error", async () => {
    const { received, ask } = harness({
      decideRecovery: async () => ({ action: "retry" }),
      runTools: async () => {
        throw new Error("runner crashed");
      },
    });
    ask({ type: "decideRecovery", input: {} as never });
    await settle();
    ask({ type: "runTools", input: {} as never });
    await settle();
    expect(received.map((e) => e.type)).toEqual(["decideRecovery.done", "runTools.error"]);
    expect(received[0]).toMatchObject({ output: { action: "retry" } });
    expect((received[1] as { error: Error }).error.message).toBe("runner crashed");
  });

  it("turns work that throws before it returns a promise into <name>.error", async () => {
    const { received, ask } = harness({
      askPermission: (() => {
        throw new Error("synchronous failure");
      }) as Effects["askPermission"],
    });
    ask({ type: "askPermission", input: {} as never });
    await settle();
    expect(received.map((e) => e.type)).toEqual(["askPermission.error"]);
  });

  it("relays progress while the work is current; cancel aborts its signal and drops what it still reports or returns", async () => {
    const gate = deferred<void>();
    let signal: AbortSignal | undefined;
    let report: ((event: never) => void) | undefined;
    const { received, ask } = harness({
      callModel: async (_input, s, r) => {
        signal = s;
        report = r as never;
        r({ type: "model.stream", event: { type: "text_delta", text: "Hi" } });
        await gate.promise;
        return { text: "late", toolCalls: [], finishReason: "stop" };
      },
    });
    ask({ type: "callModel", input: {} as never });
    await settle();
    expect(received.map((e) => e.type)).toEqual(["model.stream"]);
    ask({ type: "cancel" });
    expect(signal?.aborted).toBe(true);
    report!({ type: "model.stream", event: { type: "text_delta", text: "after cancel" } } as never);
    gate.resolve();
    await settle();
    expect(received.map((e) => e.type)).toEqual(["model.stream"]);
  });

  it("a new request replaces work still in flight, aborting it", async () => {
    const signals: AbortSignal[] = [];
    const { received, ask } = harness({
      buildContext: (_input, s) => {
        signals.push(s);
        return signals.length === 1 ? new Promise(() => {}) : Promise.resolve({});
      },
    });
    ask({ type: "buildContext", input: {} as never });
    ask({ type: "buildContext", input: {} as never });
    await settle();
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    expect(received.map((e) => e.type)).toEqual(["buildContext.done"]);
  });

  it("stopping the parent aborts the work in flight", async () => {
    let signal: AbortSignal | undefined;
    const { actor, ask } = harness({
      runTools: (_input, s) => {
        signal = s;
        return new Promise(() => {});
      },
    });
    ask({ type: "runTools", input: {} as never });
    await settle();
    expect(signal?.aborted).toBe(false);
    actor.stop();
    expect(signal?.aborted).toBe(true);
  });

  it("work that ended cleanly passes its signal on; a signal left with a listener, or aborted, is not passed on", async () => {
    const signals: AbortSignal[] = [];
    let leaveListener = false;
    const { ask } = harness({
      decideRecovery: async (_input, signal) => {
        signals.push(signal);
        if (leaveListener) signal.addEventListener("abort", () => {});
        return { action: "abort" };
      },
      runTools: (_input, signal) => {
        signals.push(signal);
        return new Promise(() => {});
      },
    });
    ask({ type: "decideRecovery", input: {} as never });
    await settle();
    ask({ type: "decideRecovery", input: {} as never });
    await settle();
    expect(signals[1]).toBe(signals[0]);
    leaveListener = true;
    ask({ type: "decideRecovery", input: {} as never });
    await settle();
    ask({ type: "runTools", input: {} as never });
    await settle();
    expect(signals[3]).not.toBe(signals[2]);
    ask({ type: "cancel" });
    expect(signals[3].aborted).toBe(true);
    expect(signals[2].aborted).toBe(false);
    leaveListener = false;
    ask({ type: "decideRecovery", input: {} as never });
    await settle();
    expect(signals[4]).not.toBe(signals[3]);
    expect(signals[4].aborted).toBe(false);
  });

  it("isResultOf matches only the named work's own ending", () => {
    expect(isResultOf({ type: "callModel.done" }, "callModel")).toBe(true);
    expect(isResultOf({ type: "callModel.error" }, "callModel")).toBe(true);
    expect(isResultOf({ type: "callModel" }, "callModel")).toBe(false);
    expect(isResultOf({ type: "runTools.done" }, "callModel")).toBe(false);
    expect(isResultOf({ type: "model.stream" }, "callModel")).toBe(false);
  });
});

