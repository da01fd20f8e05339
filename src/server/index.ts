// statecraft/server: agent runs over HTTP (docs/server.md): runs with resumable Server-Sent Events and approvals, the
// AI SDK UI message stream and AG-UI. Its own entry: the main entry never loads it.
export { serve, type StatecraftServer } from "./serve.js";
export type { ServeOptions } from "./serve-options.js";
export { toUIMessageStream, type UIMessageChunk, type UIMessageStreamOptions } from "./ui-message-stream.js";
export { toAgUiEvents, AG_UI_PROTOCOL_VERSION, type AgUiEvent, type AgUiEventsOptions } from "./ag-ui.js";
export type { RunInfo, RunStatus } from "./run-log.js";
