import type { McpServerConfig } from "./config.js";

/** The revision of the stateless generation this client speaks (`server/discover`, per-request `_meta`). */
export const MODERN_PROTOCOL = "2026-07-28";

/** One way of connecting: the SDK's negotiation mode for it. */
export type ConnectAttempt = { mode: "legacy" } | { mode: "auto" } | { mode: { pin: string } };

/**
 * The ways a server is connected, tried in order; the next is tried only when the server refused the one before
 * (answered its opening with a protocol error), never after a crash or a timeout.
 *
 * - HTTP, `protocol: "auto"`: the SDK's own negotiation — `server/discover` first, the 2025 `initialize` when the
 *   server does not know it. One request either way, on the connection itself.
 * - stdio, `protocol: "auto"`: the 2025 `initialize` first (offering 2025-11-25 and taking what the server answers),
 *   and `server/discover` pinned to 2026-07-28 when the server refuses that handshake. Every server of both
 *   generations that is not modern-only answers `initialize`; probing first would start each stdio server twice (the
 *   SDK probes on a second copy of the process), which a server holding a lock, a port or a database cannot bear.
 * - `protocol: "2026-07-28"` or `"legacy"`: that generation only.
 */
export function connectAttempts(config: McpServerConfig): ConnectAttempt[] {
  const protocol = config.protocol ?? "auto";
  if (protocol === MODERN_PROTOCOL) return [{ mode: { pin: MODERN_PROTOCOL } }];
  if (protocol === "legacy") return [{ mode: "legacy" }];
  if ("command" in config) return [{ mode: "legacy" }, { mode: { pin: MODERN_PROTOCOL } }];
  return [{ mode: "auto" }];
}
