// Declared with the trace format (src/record/), which names them on every done line; the machine uses them from there.
export { STOP_REASONS, type StopReason } from "../record/stop-reasons.js";
