import { toJson, toJsonText, type Json } from "./serialize.js";

/**
 * The most characters of JSON a permission request's call may take to be sent to the page whole. Other records cut
 * long strings at 20 000 characters; a call to approve is not cut, since what the page does not show must not be
 * allowed from it: a longer call is sent cut (like any record) and marked as not allowable.
 */
export const MAX_SHOWN_CALL_CHARS = 1_000_000;

/** Objects nested deeper than this are not shown whole (tool inputs are JSON a model wrote: a few levels). */
const MAX_SHOWN_DEPTH = 64;

/** A permission request's call as the page gets it. */
export interface ShownCall {
  call: Json;
  /** Whether `call` is all of it: only then may a page allow it. */
  whole: boolean;
  /** When not whole: why, in words a person reading the page understands. */
  why?: string;
}

/**
 * Characters a page cannot show as they run: control characters (but newline and tab) and Unicode format characters
 * (bidirectional overrides and isolates, zero-width spaces and joiners, the BOM…), which reorder or hide text.
 */
// eslint-disable-next-line no-control-regex
const UNSEEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\p{Cf}/u;

function unseenIn(value: unknown, depth = 0): string | undefined {
  if (typeof value === "string") {
    const hit = UNSEEN.exec(value);
    return hit ? `U+${hit[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}` : undefined;
  }
  if (value === null || typeof value !== "object" || depth > MAX_SHOWN_DEPTH) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const hit = unseenIn(key, depth + 1) ?? unseenIn(item, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * The call as the page gets it. `hidden` says why what the page is sent differs from what would run (the caller
 * redacted secret-looking parts): then, as for a call too large or holding characters a page can't show, the page
 * may only deny it.
 */
export function shownCall(call: unknown, hidden?: string): ShownCall {
  const unshowable = notJsonData(call, 0);
  if (unshowable) return { call: toJson(call), whole: false, why: unshowable };
  if (hidden !== undefined) return { call: toJson(call), whole: false, why: hidden };
  const unseen = unseenIn(call);
  if (unseen !== undefined) {
    return {
      call: toJson(call),
      whole: false,
      why: `the call holds the invisible or text-reordering character ${unseen}, so what a page shows is not what would run`,
    };
  }
  // Same conversion as other records (credentials under well-known keys redacted), only without cutting.
  const text = toJsonText(call, { maxString: Number.POSITIVE_INFINITY, maxItems: Number.POSITIVE_INFINITY, maxDepth: MAX_SHOWN_DEPTH + 1 });
  if (text.length > MAX_SHOWN_CALL_CHARS) {
    return {
      call: toJson(call),
      whole: false,
      why: `the call is ${text.length} characters of JSON and the page shows at most ${MAX_SHOWN_CALL_CHARS} whole, so it was cut`,
    };
  }
  return { call: JSON.parse(text) as Json, whole: true };
}

/**
 * Why a value is not plain JSON data the page can show as it is (a class instance shows only as its name, a
 * function as `[function]`, deep nesting as `[Object]`), or undefined when it is.
 */
function notJsonData(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `the call holds the number ${String(value)}, which JSON cannot carry`;
    case "object":
      break;
    default:
      return `the call holds a ${typeof value}, which the page can only name, not show`;
  }
  if (value === null) return undefined;
  if (depth >= MAX_SHOWN_DEPTH) return `the call nests deeper than ${MAX_SHOWN_DEPTH} levels, more than the page shows`;
  const proto = Object.getPrototypeOf(value);
  const array = Array.isArray(value);
  if ((array && proto !== Array.prototype) || (!array && proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return "the call holds an object that is not plain data (a class instance, a map, a buffer…), which the page can only name, not show";
  }
  const items: unknown[] = array ? (value as unknown[]) : Object.values(value as object);
  for (const item of items) {
    const why = notJsonData(item, depth + 1);
    if (why) return why;
  }
  return undefined;
}
