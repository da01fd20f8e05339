import { AgentError } from "../errors/agent-error.js";

/**
 * The origins of browser apps allowed to send inspection events (`allowOrigins`, `--allow-origin`): a dev server such
 * as `http://localhost:5173`. Each must be an origin exactly as a browser sends it in its `Origin` header — scheme,
 * host and port, nothing else — so that what is allowed is plain to see.
 */
export function checkAllowOrigins(list: unknown, what = "allowOrigins"): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new AgentError("INVALID_OPTIONS", `${what} must be a list of origins such as ["http://localhost:5173"], got ${JSON.stringify(list)}`);
  return list.map((item) => checkAllowOrigin(item, what));
}

export function checkAllowOrigin(value: unknown, what = "allowOrigins"): string {
  const fix = `give an origin as the browser shows it, such as http://localhost:5173 (scheme, host and port; no path)`;
  if (typeof value !== "string" || value.trim() === "") throw new AgentError("INVALID_OPTIONS", `${what}: ${JSON.stringify(value ?? null)} is not an origin; ${fix}`);
  if (value.includes("*")) throw new AgentError("INVALID_OPTIONS", `${what}: ${value} has a wildcard; each origin is allowed by itself: ${fix}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AgentError("INVALID_OPTIONS", `${what}: ${value} is not a URL; ${fix}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new AgentError("INVALID_OPTIONS", `${what}: ${value} is not an http or https origin; ${fix}`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    throw new AgentError("INVALID_OPTIONS", `${what}: ${value} has more than an origin (a path, query, fragment or credentials); ${fix}`);
  }
  if (value.replace(/\/$/, "") !== url.origin) {
    throw new AgentError("INVALID_OPTIONS", `${what}: ${value} is not written as browsers send it (${url.origin}); give ${url.origin}`);
  }
  return url.origin;
}
