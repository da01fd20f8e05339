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
  return converter(options).visit(value, 0);
}

/**
 * `JSON.stringify(toJson(value, options))`, made faster for plain data (the inspector serialises a run's whole
 * context at every state): a part that toJson would copy as it is (plain objects and arrays of strings, finite
 * numbers, booleans and nulls, within the limits, without credentials under well-known keys) is serialised as it
 * stands, without the copy; only the rest is converted first.
 */
export function toJsonText(value: unknown, options: ToJsonOptions = {}): string {
  return toJsonTextAt(value, 0, options);
}

/**
 * The text `toJsonText` writes for `value` where it sits `depth` levels down in a larger value (the depth limit counts
 * from the top): lets a caller write an object's fields one by one, and keep the text of fields that did not change.
 */
export function toJsonTextAt(value: unknown, depth: number, options: ToJsonOptions = {}): string {
  const { visit, seen, maxDepth, maxString, maxItems } = converter(options);

  /** Whether `toJson` would give back `v` (at this depth) unchanged, as far as its JSON shows. */
  const same = (v: unknown, depth: number): boolean => {
    switch (typeof v) {
      case "string":
        return v.length <= maxString;
      case "number":
        return Number.isFinite(v);
      case "boolean":
        return true;
      case "object":
        break;
      default:
        return false;
    }
    if (v === null) return true;
    if (depth >= maxDepth || seen.has(v)) return false;
    const proto = Object.getPrototypeOf(v);
    const array = proto === Array.prototype && Array.isArray(v);
    if (!array && proto !== Object.prototype && proto !== null) return false;
    if ((v as { toJSON?: unknown }).toJSON !== undefined) return false;
    seen.add(v);
    try {
      if (array) {
        if (v.length > maxItems) return false;
        // A hole or an undefined item is null in both.
        for (let i = 0; i < v.length; i++) if (v[i] !== undefined && !same(v[i], depth + 1)) return false;
        return true;
      }
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        const item = (v as Record<string, unknown>)[key];
        // Both leave out an undefined value; toJson also a `__proto__` key (it would set the copy's prototype).
        if (item === undefined) continue;
        if (key === "__proto__" || (item !== null && item !== "" && isSecretKey(key)) || !same(item, depth + 1)) return false;
      }
      return true;
    } finally {
      seen.delete(v);
    }
  };

  const text = (v: unknown, depth: number): string => {
    if (same(v, depth)) return JSON.stringify(v);
    // Not as it stands: a plain container is written part by part, so that only what needs it is converted.
    if (typeof v === "object" && v !== null && depth < maxDepth && !seen.has(v) && (v as { toJSON?: unknown }).toJSON === undefined) {
      const proto = Object.getPrototypeOf(v);
      if (proto === Array.prototype && Array.isArray(v)) {
        seen.add(v);
        try {
          const end = Math.min(v.length, maxItems);
          let out = "[";
          for (let i = 0; i < end; i++) out += (i > 0 ? "," : "") + text(v[i], depth + 1);
          if (v.length > maxItems) out += `${end > 0 ? "," : ""}"[${v.length - maxItems} more items]"`;
          return out + "]";
        } finally {
          seen.delete(v);
        }
      }
      if (proto === Object.prototype || proto === null) {
        seen.add(v);
        try {
          let out = "{";
          for (const key in v) {
            if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
            const item = (v as Record<string, unknown>)[key];
            if (item === undefined || key === "__proto__") continue;
            out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${item !== null && item !== "" && isSecretKey(key) ? '"[redacted]"' : text(item, depth + 1)}`;
          }
          return out + "}";
        } finally {
          seen.delete(v);
        }
      }
    }
    return JSON.stringify(visit(v, depth));
  };

  return text(value, depth);
}

/** Whether a key's value is never shown, remembered per key: the same few keys come back in every value. */
const secretKeys = new Map<string, boolean>();
export function isSecretKey(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY.test(key);
    if (secretKeys.size < 5000) secretKeys.set(key, secret);
  }
  return secret;
}

function cut(v: string, maxString: number): string {
  return `${v.slice(0, maxString)}… [${v.length - maxString} more characters]`;
}

function converter(options: ToJsonOptions) {
  const maxDepth = options.maxDepth ?? 8;
  const maxString = options.maxString ?? 20_000;
  const maxItems = options.maxItems ?? 500;
  const seen = new Set<object>();

  const visit = (v: unknown, depth: number): Json => {
    switch (typeof v) {
      case "string":
        return v.length > maxString ? cut(v, maxString) : v;
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

  return { visit, seen, maxDepth, maxString, maxItems };
}
