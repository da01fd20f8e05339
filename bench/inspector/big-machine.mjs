// A 200-state machine shaped like a large app's: 20 compound features of 9 states each (atomic states, a nested
// compound, a final state), events within a feature, jumps between features, `always` and `after` arrows.
import { createMachine } from "xstate";

export function bigMachine(features = 20) {
  const states = {};
  for (let f = 0; f < features; f++) {
    const next = `f${(f + 1) % features}`;
    states[`f${f}`] = {
      initial: "idle",
      on: { RESET: ".idle" },
      states: {
        idle: { on: { START: "loading", [`JUMP${f}`]: `#big.${next}.ready` } },
        loading: { after: { 100: "ready" }, on: { FAIL: "failed" } },
        ready: { on: { EDIT: "editing.form", NEXT: `#big.${next}` } },
        editing: {
          initial: "form",
          states: { form: { on: { SUBMIT: "saving" } }, saving: { always: "#big." + `f${f}` + ".saved" } },
        },
        saved: { on: { AGAIN: { target: "saved", reenter: true }, DONE: "done" } },
        failed: { on: { RETRY: "loading" } },
        done: { type: "final" },
      },
    };
  }
  return createMachine({ id: "big", initial: "f0", states });
}
