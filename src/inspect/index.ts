/**
 * `statecraft/inspect`: the inspector server, which shows a run live in a browser, and the machine chart it draws.
 * `statecraft` re-exports the same names, so code written against the main entry keeps working.
 */
export { startInspector } from "./start.js";
export type { Inspector, InspectorOptions } from "./server.js";
export type { InspectedRun, InspectedRunInfo, PermissionRequestOptions } from "./run.js";
export type { TracedRunOptions, TracedTool, PermissionSettings } from "../record/settings-record.js";
export type { InspectObserver } from "./actors.js";
export { machineChart, chartFromDefinition, type MachineChart, type ChartState, type ChartEdge, type ChartAnyState, type ChartEdgeKind } from "./chart.js";
