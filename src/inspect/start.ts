import type { Inspector, InspectorOptions } from "./server.js";

/**
 * Starts the inspector server (see server.ts). The server and `ws` are loaded on the first call, not when a program
 * imports statecraft: most programs never inspect, and loading them costs every import.
 */
export async function startInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const server = await import("./server.js");
  return server.startInspector(options);
}
