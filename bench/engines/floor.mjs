// The floor: the seed's ten states as a bare XState 5.33 graph, the states a tool step passes through entered one
// event at a time, no work in them, one subscriber. No encoding of the ten states can cost less per step.
import { createActor, createMachine } from "xstate";
import { probe } from "../lib/common.mjs";

const machine = createMachine({
  id: "floor",
  initial: "build_context",
  states: {
    build_context: { on: { NEXT: "call_model" } },
    call_model: { on: { NEXT: "parse_tool_call", TEXT: "stream_text", ANSWER: "done" } },
    stream_text: { on: { NEXT: "parse_tool_call", ANSWER: "done" } },
    parse_tool_call: { on: { NEXT: "validate_tool" } },
    validate_tool: { on: { NEXT: "ask_permission", ERROR: "recover" } },
    ask_permission: { on: { NEXT: "execute_tool", ERROR: "recover" } },
    execute_tool: { on: { NEXT: "append_tool_result", ERROR: "recover" } },
    append_tool_result: { on: { NEXT: "build_context" } },
    recover: { on: { NEXT: "append_tool_result", ANSWER: "done" } },
    done: { type: "final" },
  },
});

/** The states statecraft enters per tool step, as in its trace: seven transitions from build_context back to it. */
const STEP_EVENTS = 7;
const NEXT = { type: "NEXT" };
const ANSWER = { type: "ANSWER" };

export function floorEngine() {
  return {
    async make(N) {
      let entered = 0;
      let final;
      return {
        async run() {
          const actor = createActor(machine);
          actor.subscribe((snapshot) => {
            entered++;
            if (snapshot.status === "done") final = snapshot.value;
          });
          actor.start();
          for (let step = 0; step < N; step++) {
            for (let k = 0; k < STEP_EVENTS; k++) actor.send(NEXT);
            probe();
          }
          actor.send(NEXT); // build_context → call_model
          actor.send(ANSWER); // call_model → done
        },
        verify() {
          if (final !== "done" || entered !== 1 + STEP_EVENTS * N + 2) throw new Error(`floor: entered ${entered} states, ended in ${final}`);
          return {};
        },
        dispose() {},
      };
    },
  };
}
