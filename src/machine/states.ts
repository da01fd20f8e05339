// Declared with the trace format (src/record/), which names them on every line; the machine uses them from there.
export { ENGINE_STATES, type EngineStateName } from "../record/engine-states.js";
