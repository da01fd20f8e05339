import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AgentError } from "../../src/errors/agent-error.js";
import { toJson, toJsonText } from "../../src/inspect/serialize.js";

describe("toJson: what an inspector page may be sent", () => {
  it("keeps plain data as it is", () => {
    const data = { a: 1, b: "two", c: [true, null, { d: 4.5 }], e: { f: [] } };
    expect(toJson(data)).toEqual(data);
  });

  it("turns what JSON cannot hold into readable stand-ins instead of throwing or dropping it", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const shared = { x: 1 };
    class Client {
      apiKey = "sk-secret";
    }
    const out = toJson({
      cyclic,
      twice: [shared, shared],
      fn: function callModel() {},
      arrow: () => 1,
      big: 10n,
      sym: Symbol("s"),
      nan: Number.NaN,
      date: new Date("2026-01-01T00:00:00Z"),
      map: new Map([["k", 1]]),
      set: new Set([1, 2]),
      error: new AgentError("TOOL_FAILED", "boom", { status: 500 }),
      plainError: new TypeError("bad"),
      client: new Client(),
      signal: new AbortController().signal,
      undef: undefined,
      bytes: new Uint8Array(3),
    }) as Record<string, unknown>;
    expect(out.cyclic).toEqual({ name: "loop", self: "[Circular]" });
    expect(out.twice).toEqual([{ x: 1 }, { x: 1 }]);
    expect(out.fn).toBe("[function callModel]");
    expect(out.arrow).toBe("[function arrow]");
    expect(out.big).toBe("10n");
    expect(out.sym).toBe("Symbol(s)");
    expect(out.nan).toBe("NaN");
    expect(out.date).toBe("2026-01-01T00:00:00.000Z");
    expect(out.map).toEqual({ "[Map]": [["k", 1]] });
    expect(out.set).toEqual({ "[Set]": [1, 2] });
    expect(out.error).toEqual({ name: "AgentError", message: "boom", code: "TOOL_FAILED", status: 500 });
    expect(out.plainError).toEqual({ name: "TypeError", message: "bad" });
    // A class instance is not data and may hold credentials: only its class is named.
    expect(out.client).toBe("[Client]");
    expect(out.signal).toEqual({ "[AbortSignal]": { aborted: false } });
    expect("undef" in out).toBe(false);
    expect(out.bytes).toBe("[Uint8Array 3 bytes]");
  });

  it("redacts credentials under well-known keys", () => {
    expect(toJson({ apiKey: "sk-1", headers: { Authorization: "Bearer x", accept: "json" }, password: "p", token: "", note: "apiKey is fine as text" })).toEqual({
      apiKey: "[redacted]",
      headers: { Authorization: "[redacted]", accept: "json" },
      password: "[redacted]",
      token: "",
      note: "apiKey is fine as text",
    });
  });

  it("cuts what is too large, saying how much was cut", () => {
    const deep = { a: { b: { c: { d: 1 } } } };
    expect(toJson(deep, { maxDepth: 2 })).toEqual({ a: { b: "[Object]" } });
    expect(toJson("x".repeat(30), { maxString: 10 })).toBe(`${"x".repeat(10)}… [20 more characters]`);
    expect(toJson([1, 2, 3, 4], { maxItems: 2 })).toEqual([1, 2, "[2 more items]"]);
  });
});

describe("toJsonText: the same text as serialising toJson's copy, in one pass", () => {
  class Client {
    apiKey = "sk-secret";
  }
  const special = (): Record<string, unknown> => {
    const cyclic: Record<string, unknown> = { name: "loop", list: [] as unknown[] };
    (cyclic.list as unknown[]).push(cyclic, [cyclic]);
    cyclic.self = cyclic;
    const shared = { x: 1 };
    const sparse: unknown[] = [1];
    sparse[3] = "four";
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = [1, { apiKey: "v" }];
    return {
      cyclic,
      twice: [shared, shared, [shared]],
      fn: function callModel() {},
      big: -10n,
      sym: Symbol("s\"q"),
      nums: [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, 5e-7, -1.5],
      date: new Date("2026-01-01T00:00:00Z"),
      badDate: new Date(Number.NaN),
      map: new Map<unknown, unknown>([["k", { password: "p" }]]),
      set: new Set([1, [2, 3]]),
      error: new AgentError("TOOL_FAILED", "boom", { status: 500 }),
      client: new Client(),
      signal: new AbortController().signal,
      undef: undefined,
      bytes: new Uint8Array(3),
      withToJson: { toJSON: () => ({ shown: [1, undefined, () => 1] }) },
      sparse,
      bare,
      ["__proto__"]: { hidden: true },
      keys: { "2": "b", "1": "a", z: 1, "é\u2028\"": 2, token: "", secret: null, Authorization: "Bearer x" },
      text: "line\nquote\" tab\t \u0000 \ud800 emoji 😀",
    };
  };

  it("matches on everything toJson turns into a stand-in, with and without limits", () => {
    const value = special();
    // A key named __proto__ only as an own key (JSON.parse makes them; a literal sets the prototype).
    Object.defineProperty(value, "__proto__", { value: { own: 1 }, enumerable: true, configurable: true, writable: true });
    for (const options of [{}, { maxDepth: 2 }, { maxDepth: 0 }, { maxString: 3 }, { maxItems: 1 }, { maxItems: 0 }]) {
      const text = toJsonText(value, options);
      expect(text).toBe(JSON.stringify(toJson(value, options)));
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });

  it("matches on arbitrary values", () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withObjectString: true, withBoxedValues: true }),
        fc.record({ maxDepth: fc.integer({ min: 0, max: 6 }), maxString: fc.integer({ min: 0, max: 20 }), maxItems: fc.integer({ min: 0, max: 5 }) }, { requiredKeys: [] }),
        (value, options) => {
          expect(toJsonText(value, options)).toBe(JSON.stringify(toJson(value, options)));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
