// The machine's own primitives, what any design of the engine pays per use: a seven-state ring driven by one event at
// a time (one subscriber), bare, then with one action of each kind on every transition, and with an inspection
// callback attached. The cost of an action is its ring's cost per transition minus the bare ring's; the floor of a
// design is the sum of its primitives times how often a step uses them.
// Usage: node bench/primitives.mjs [transitions=70000] [rounds=7]
import { createRequire } from "node:module";

// The engine's copy of XState.
const { assign, createActor, emit, enqueueActions, fromCallback, sendTo, setup } = createRequire(new URL("../package.json", import.meta.url))("xstate");

const TRANSITIONS = Number(process.argv[2] ?? 70_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const STATES = 7;

function ring(action) {
  const states = {};
  for (let i = 0; i < STATES; i++) states[`s${i}`] = { on: { NEXT: { target: `s${(i + 1) % STATES}`, ...(action ? { actions: action } : {}) } } };
  return setup({ actors: { child: fromCallback(({ receive }) => receive(() => {})) } }).createMachine({
    context: { n: 0 },
    invoke: { id: "child", src: "child" },
    initial: "s0",
    states,
  });
}

const variants = {
  transition: { machine: ring() },
  assign: { machine: ring(assign({ n: ({ context }) => context.n + 1 })) },
  emit: { machine: ring(emit({ type: "noted" })) },
  sendTo: { machine: ring(sendTo("child", { type: "ping" })) },
  enqueueActions: { machine: ring(enqueueActions(() => {})) },
  "inspection (per transition)": { machine: ring(), inspect: true },
};

function once({ machine, inspect }) {
  let events = 0;
  const actor = createActor(machine, inspect ? { inspect: () => events++ } : {});
  actor.subscribe(() => {});
  actor.start();
  const event = { type: "NEXT" };
  const t0 = performance.now();
  for (let i = 0; i < TRANSITIONS; i++) actor.send(event);
  const us = ((performance.now() - t0) * 1000) / TRANSITIONS;
  actor.stop();
  return { us, eventsPerTransition: events / TRANSITIONS };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
let inspectionEvents = 0;
for (const v of Object.values(variants)) once(v); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, v] of Object.entries(variants)) {
    const { us, eventsPerTransition } = once(v);
    results[name].push(us);
    if (v.inspect) inspectionEvents = eventsPerTransition;
  }
}
const bare = median(results.transition);
console.log(`| primitive | µs each | (ring µs per transition, median of ${ROUNDS}) |`);
console.log("|---|---:|---:|");
for (const [name, xs] of Object.entries(results)) {
  const m = median(xs);
  const each = name === "transition" ? m : name.startsWith("inspection") ? (m - bare) / inspectionEvents : m - bare;
  const label = name.startsWith("inspection") ? `inspection event (${inspectionEvents.toFixed(1)} per transition)` : name === "transition" ? "transition (send, microstep, snapshot, subscriber)" : `\`${name}\` on a transition`;
  console.log(`| ${label} | ${each.toFixed(2)} | ${m.toFixed(2)} |`);
}
