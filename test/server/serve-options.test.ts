import { describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/index.js";
import { serve } from "../../src/server/index.js";
import { TOKEN } from "./helpers.js";

describe("serve() refuses options that can't work, naming them", () => {
  const model = scriptedModel([{ text: "x" }]);
  const cases: Array<[string, unknown, RegExp]> = [
    ["no token", { model }, /options\.token must be a string of at least 16 characters/],
    ["a short token", { model, token: "short" }, /at least 16 characters/],
    ["a token with spaces", { model, token: "a token with spaces in it" }, /without spaces/],
    ["no model", { token: TOKEN }, /options\.model is required/],
    ["an unknown option", { model, token: TOKEN, port: 80 }, /options\.port is not an option/],
    ["a bad store", { model, token: TOKEN, store: "disk" }, /options\.store must be "file" or "memory"/],
    ["memory and a database", { model, token: TOKEN, store: "memory", database: "postgres://x@127.0.0.1/db" }, /give one/],
    ["a bad body limit", { model, token: TOKEN, maxBodyBytes: 0 }, /maxBodyBytes must be a whole number/],
    ["permissions in runOptions", { model, token: TOKEN, runOptions: { permissions: { mode: "plan" } } }, /the permissions are options\.permissions/],
    ["a bad limit", { model, token: TOKEN, runOptions: { maxTurns: -1 } }, /maxTurns must be a number/],
    ["a wildcard origin", { model, token: TOKEN, allowOrigins: ["http://*.example.com"] }, /wildcard/],
    ["a trace file with a database", { model, token: TOKEN, traceFile: "t.jsonl", database: "postgres://x@127.0.0.1/db" }, /drop traceFile/],
    ["a host with a path", { model, token: TOKEN, hosts: ["example.com/x"] }, /options\.hosts must be a list of Host header values/],
  ];
  for (const [name, options, message] of cases) {
    it(name, () => {
      expect(() => serve(options as Parameters<typeof serve>[0])).toThrow(message);
    });
  }
});
