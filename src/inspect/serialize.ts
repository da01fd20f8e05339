/** JSON-safe data: what the inspector sends to its pages. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface ToJsonOptions {
  /** Objects nested deeper than this become `"[Object]"` / `"[Array]"` (default 8). */
  maxDepth?: number;
  /** Strings longer than this are cut, saying how much was cut (default 20 000). */
  maxString?: number;
  /** Arrays longer than this keep their first items and say how many were left out (default 500). */
  maxItems?: number;
}

/** Keys whose values are never shown: credentials a context or an event may carry. */
const SECRET_KEY = /^(api[-_]?key|authorization|password|passwd|secret|client[-_]?secret|access[-_]?token|refresh[-_]?token|token|cookie|x-api-key)$/i;

/**
 * Turns anything an actor holds (contexts, events, tool inputs) into data a page can show: cycles, functions,
 * class instances, errors, maps, sets, bigints and symbols become readable stand-ins instead of throwing or
 * vanishing; credentials under well-known keys are redacted; very large values are cut with a note saying so.
 */
export function toJson(value: unknown, options: ToJsonOptions = {}): Json {
  const maxDepth = options.maxDepth ?? 8;
  const maxString = options.maxString ?? 20_000;
  const maxItems = options.maxItems ?? 500;
  const seen = new Set<object>();

  const visit = (v: unknown, depth: number): Json => {
    switch (typeof v) {
      case "string":
        return v.length > maxString ? `${v.slice(0, maxString)}… [${v.length - maxString} more characters]` : v;
      case "number":
        return Number.isFinite(v) ? v : String(v);
      case "boolean":
        return v;
      case "bigint":
        return `${v}n`;
      case "symbol":
        return v.toString();
      case "function":
        return `[function ${v.name || "anonymous"}]`;
      case "undefined":
        return null;
      default:
        break;
    }
    if (v === null) return null;
    const obj = v as object;
    if (seen.has(obj)) return "[Circular]";
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
    if (v instanceof RegExp) return v.toString();
    if (depth >= maxDepth) return Array.isArray(v) ? "[Array]" : "[Object]";
    seen.add(obj);
    try {
      if (v instanceof Error) {
        const out: { [key: string]: Json } = { name: v.name, message: v.message };
        const code = (v as { code?: unknown }).code;
        if (code !== undefined) out.code = visit(code, depth + 1);
        const status = (v as { status?: unknown }).status;
        if (status !== undefined) out.status = visit(status, depth + 1);
        return out;
      }
      if (Array.isArray(v)) return list(v, depth);
      if (v instanceof Map) return { "[Map]": list([...v.entries()], depth) };
      if (v instanceof Set) return { "[Set]": list([...v.values()], depth) };
      if (ArrayBuffer.isView(v)) return `[${v.constructor.name} ${v.byteLength} bytes]`;
      if (typeof AbortSignal !== "undefined" && v instanceof AbortSignal) return { "[AbortSignal]": { aborted: v.aborted } };
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") return visit((toJSON as (this: unknown) => unknown).call(v), depth);
      const proto = Object.getPrototypeOf(v);
      if (proto !== null && proto !== Object.prototype) {
        // A class instance (a client, a socket, an actor): its insides are not data and may hold credentials.
        return `[${(proto.constructor as { name?: string } | undefined)?.name || "object"}]`;
      }
      const out: { [key: string]: Json } = {};
      for (const [key, item] of Object.entries(v as Record<string, unknown>)) {
        if (item === undefined) continue;
        out[key] = SECRET_KEY.test(key) && item !== null && item !== "" ? "[redacted]" : visit(item, depth + 1);
      }
      return out;
    } finally {
      seen.delete(obj);
    }
  };

  const list = (items: readonly unknown[], depth: number): Json[] => {
    const out = items.slice(0, maxItems).map((item) => visit(item, depth + 1));
    if (items.length > maxItems) out.push(`[${items.length - maxItems} more items]`);
    return out;
  };

  return visit(value, 0);
}
