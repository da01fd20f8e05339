// The V8 behaviour behind the promoted bytes, without XState or statecraft: a function literal assigned straight to a
// property (`scope.exec = (a) => …`) is allocated in old space when unoptimised code creates it (V8's parser marks such
// literals for pretenuring, meant for `Foo.prototype.f = function …`). An old closure keeps its scope alive past every
// scavenge, so everything the scope reaches is promoted and waits for a mark-compact, although nothing uses it. The
// same closure written `(0, (a) => …)` is not a literal assigned to a property and dies young. XState's `microstep`
// does the first for every microstep (bench/notes.md, "Promoted bytes").
//   node bench/pretenured-closures.mjs      (runs each variant in a child under the interpreter only)
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const variant = process.argv[2];
if (variant === undefined) {
  for (const name of ["assigned", "wrapped"]) {
    const child = spawnSync(process.execPath, ["--no-opt", "--no-sparkplug", "--trace-gc-nvp", fileURLToPath(import.meta.url), name], { encoding: "utf8", maxBuffer: 1 << 26 });
    if (child.status !== 0) throw new Error(child.stderr);
    let promoted = 0;
    let allocated = 0;
    for (const line of child.stdout.split("\n")) {
      if (!/\bgc=s\b/.test(line)) continue;
      promoted += Number(/\bpromoted=(\d+)/.exec(line)[1]);
      allocated += Number(/\ballocated=(\d+)/.exec(line)[1]);
    }
    console.log(`${name.padEnd(9)} ${name === "assigned" ? "scope.exec = (a) => {…}     " : "scope.exec = (0, (a) => {…})"}  promoted ${((100 * promoted) / allocated).toFixed(2)} % of ${(allocated / 2 ** 20).toFixed(0)} MB allocated`);
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
  for (let k = 0; k < 200_000; k++) {
    step(k);
    await null;
  }
}
