// Two V8 (Node 20) behaviours behind the promoted bytes, without XState or statecraft; each variant's garbage is
// dropped at once, so all of it should die young (bench/notes.md, "Promoted bytes: the cause").
//   assigned / wrapped   A function literal assigned straight to a property (`scope.exec = (a) => …`) is allocated in
//                        old space when unoptimised code creates it (V8's parser marks such literals for pretenuring,
//                        meant for `Foo.prototype.f = function …`); an old closure keeps its scope alive past every
//                        scavenge. The same closure written `(0, (a) => …)` is not such a literal and dies young.
//                        Run under the interpreter only (`--no-opt --no-sparkplug`). XState's `microstep` and
//                        `enqueueActions` do the first on every step.
//   spread / assign      A spread copy given a property its source lacks (`{ ...base, name }`, or `o = { ...base };
//                        o.name = …`) outlives the scavenges, optimised or not; `Object.assign({}, base, { name })`
//                        and a literal written out do not. statecraft's own step had a few of those.
//   node bench/v8-promotes.mjs      (each variant in a child process of its own)
import { fileURLToPath } from "node:url";
import { traceGc } from "./lib/promoted.mjs";

const VARIANTS = {
  assigned: ["--no-opt", "--no-sparkplug"],
  wrapped: ["--no-opt", "--no-sparkplug"],
  spread: [],
  assign: [],
};

const variant = process.argv[2];
if (variant === undefined) {
  for (const [name, flags] of Object.entries(VARIANTS)) {
    const { promoted, allocated } = traceGc([fileURLToPath(import.meta.url), name], { flags });
    console.log(`${name.padEnd(9)} ${(flags.join(" ") || "optimised").padEnd(24)} promoted ${((100 * promoted) / allocated).toFixed(2).padStart(6)} % of ${(allocated / 2 ** 20).toFixed(0)} MB allocated`);
  }
} else {
  // One "microstep": wrap the executor to collect what it runs, run three actions, restore it.
  const scope = { exec: (action) => action.k };
  const step = (k) => {
    const actions = [];
    const original = scope.exec;
    if (variant === "assigned")
      scope.exec = (action) => {
        actions.push(action);
        return original(action);
      };
    else
      scope.exec = (0, (action) => {
        actions.push(action);
        return original(action);
      });
    for (let i = 0; i < 3; i++) scope.exec({ i, k, payload: [k, i] });
    scope.exec = original;
    return actions.length;
  };
  // One record named: a copy of a fixed object with one property more.
  const base = { decision: "allow", by: "policy", rule: "read" };
  let kept;
  const copy = (k) => {
    const name = { k, parts: [k, k + 1] };
    kept = variant === "spread" ? { ...base, name } : Object.assign({}, base, { name });
    kept = undefined;
  };
  const each = variant === "assigned" || variant === "wrapped" ? step : copy;
  for (let k = 0; k < 400_000; k++) {
    each(k);
    if (k % 2 === 0) await null;
  }
}
