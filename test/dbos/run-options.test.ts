import { expect, it } from "vitest";
import { checkRunOptions, narrowPermissions } from "../../src/dbos/run-options.js";
import { turnScript } from "../../src/dbos/turn-script.js";
import type { ModelRequest } from "../../src/index.js";

it("a run's rules narrow the worker's permissions, never widen them", () => {
  const worker = { mode: "acceptEdits" as const, allow: ["bash(npm test)", "bash(git status*)"], ask: ["write_file(secrets/**)"], deny: ["bash(rm *)"] };
  // Added deny and ask rules; allow only where the worker allows the same rule; a mode letting more is not taken.
  expect(narrowPermissions(worker, { mode: "bypassPermissions", allow: ["bash(npm test)", "bash(curl *)"], ask: ["edit_file"], deny: ["bash(git push*)"] })).toEqual({
    mode: "acceptEdits",
    allow: ["bash(npm test)"],
    ask: ["write_file(secrets/**)", "edit_file"],
    deny: ["bash(rm *)", "bash(git push*)"],
    whenUnanswered: "suspend",
  });
  // A mode letting less is taken; no rules of its own: the worker's.
  expect(narrowPermissions(worker, { mode: "plan" })).toMatchObject({ mode: "plan", allow: worker.allow, deny: worker.deny });
  expect(narrowPermissions({}, undefined)).toEqual({ mode: "default", allow: [], ask: [], deny: [], whenUnanswered: "suspend" });
});

it("a queued run takes only serialisable options, each checked", () => {
  expect(checkRunOptions({ maxTurns: 3, systemPrompt: "be brief", permissions: { deny: ["bash(rm *)"] }, timeoutMs: undefined }, "enqueueRun")).toEqual({
    maxTurns: 3,
    systemPrompt: "be brief",
    permissions: { deny: ["bash(rm *)"] },
  });
  expect(() => checkRunOptions({ model: {} }, "enqueueRun")).toThrow(/options.model can't be queued: a queued run takes only .*createWorker/);
  expect(() => checkRunOptions({ maxTurns: -1 }, "enqueueRun")).toThrow(/options.maxTurns must be a number ≥ 0/);
  expect(() => checkRunOptions({ permissions: { onAsk: () => "allow" } }, "enqueueRun")).toThrow(/permissions.onAsk can't be queued/);
  expect(() => checkRunOptions({ permissions: { mode: "yolo" } }, "enqueueRun")).toThrow(/options\.permissions\.mode must be one of "default", "acceptEdits", "bypassPermissions", "plan", got "yolo"/);
  expect(() => checkRunOptions({ permissions: { allow: ["bash(unclosed"] } }, "enqueueRun")).toThrow(/enqueueRun: options\./);
});

it("a worker's script answers each model call by the turn its request is at, wherever the run was picked up", async () => {
  const model = turnScript([{ text: "first" }, { text: "second" }]);
  const answer = async (messages: ModelRequest["messages"]) => {
    let text = "";
    for await (const e of model.stream({ messages, tools: [] } as unknown as ModelRequest, { signal: new AbortController().signal })) if (e.type === "response") text = e.response.text;
    return text;
  };
  expect(await answer([{ role: "user", content: "go" }])).toBe("first");
  // A later run of the session: its history before its own prompt does not count.
  expect(await answer([{ role: "user", content: "old" }, { role: "assistant", content: "x" }, { role: "user", content: "go" }, { role: "assistant", content: "first" }])).toBe("second");
  await expect(answer([{ role: "user", content: "go" }, { role: "assistant", content: "a" }, { role: "assistant", content: "b" }])).rejects.toMatchObject({ code: "MODEL_SCRIPT_EXHAUSTED" });
});

it("a queued run's output schema travels as JSON Schema (a Standard Schema converted), with outputRetries", async () => {
  const { z } = await import("zod");
  const queued = checkRunOptions({ output: z.object({ title: z.string(), year: z.number() }), outputRetries: 1 }, "enqueueRun");
  expect(queued.outputRetries).toBe(1);
  expect(queued.output).toMatchObject({ type: "object", properties: { title: { type: "string" }, year: { type: "number" } }, required: ["title", "year"] });
  // What is queued is data: it survives JSON (DBOS keeps a workflow's arguments as JSON).
  expect(JSON.parse(JSON.stringify(queued))).toEqual(queued);
  expect(checkRunOptions({ output: { type: "array", items: { type: "string" } } }, "enqueueRun").output).toEqual({ type: "array", items: { type: "string" } });
  expect(() => checkRunOptions({ output: "a string" }, "enqueueRun")).toThrow(/enqueueRun: options\.output: must be a Standard Schema .* or a JSON Schema object/);
  expect(() => checkRunOptions({ output: { type: "object" }, outputRetries: 1.5 }, "enqueueRun")).toThrow(/options\.outputRetries must be a whole number ≥ 0, got 1\.5/);
});
