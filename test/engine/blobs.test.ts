import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defineTool, query, resume, scriptedModel } from "../../src/index.js";
import { fork } from "../../src/debug/fork.js";
import { replay } from "../../src/debug/replay.js";
import { loadSession, sessionOf, summarizeSessions } from "../../src/debug/session.js";
import type { AnyTraceLine } from "../../src/record/format.js";
import { openaiModel } from "../../src/models/openai/index.js";
import { fileBlobStore } from "../../src/record/blobs.js";
import { loadTranscript } from "../../src/record/transcript.js";
import { redactLine, secretValues } from "../../src/record/redact.js";
import { readFileTool } from "../../src/tools/builtin/read-file.js";
import type { UserMessage } from "../../src/models/messages.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { useTempHome } from "../support/home.js";
import { replies, startOpenAIServer, type OpenAIServer } from "../support/openai-server.js";

/** Images and files in the trace, transcript and stored runs: kept once by hash in .agent/blobs/, read back checked. */

useTempHome("statecraft-blobs-home-");
let cwd: string;
let server: OpenAIServer;
beforeEach(async () => {
  cwd = tempDir("statecraft-blobs-");
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
  removeDir(cwd);
});

// A 1×1 PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
const B64 = PNG.toString("base64");
const HASH = createHash("sha256").update(PNG).digest("hex");
const DATA_URL = `data:image/png;base64,${B64}`;

const model = () => openaiModel({ model: "test-model", baseURL: server.baseURL, retryBaseDelayMs: 5 }, {});
const blobsDir = () => join(cwd, ".agent", "blobs");
const blobFiles = () => (existsSync(blobsDir()) ? readdirSync(blobsDir()) : []);
const traceFile = () => join(cwd, ".agent", "trace.jsonl");
const transcriptFile = (sessionId: string) => join(cwd, ".agent", "sessions", `${sessionId}.jsonl`);
const imageInput = (text = "What is in it? Then read shot.png.") => ({ role: "user" as const, content: [{ type: "text" as const, text }, { type: "image" as const, image: new Uint8Array(PNG) }] });

/** A run that sees the same image twice: in its request, and as read_file's result. */
async function imageTwice() {
  writeFileSync(join(cwd, "shot.png"), PNG);
  server.enqueue(replies.toolCalls([{ name: "read_file", arguments: JSON.stringify({ path: "shot.png" }) }]));
  server.enqueue(replies.text("The same red dot, twice."));
  const { result } = await collect(query(imageInput(), { model: model(), tools: [readFileTool()], cwd }));
  expect(result.reason).toBe("final_answer");
  return result;
}

describe("blobs: binary content kept once, by hash", () => {
  it("blobs deduplicated: the same image twice (input + read_file) is one file; no line holds its base64", async () => {
    const result = await imageTwice();
    expect(blobFiles()).toEqual([HASH]);
    expect(readFileSync(join(blobsDir(), HASH)).equals(PNG)).toBe(true);
    for (const file of [traceFile(), transcriptFile(result.sessionId)]) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toContain(B64);
      expect(text, file).toContain(`"blob":"sha256:${HASH}"`);
    }
    const first = JSON.parse(readFileSync(traceFile(), "utf8").split("\n")[0]) as { details: { input: unknown } };
    expect(first.details.input).toEqual([
      { type: "text", text: "What is in it? Then read shot.png." },
      { type: "image", blob: `sha256:${HASH}`, mediaType: "image/png", bytes: PNG.length },
    ]);
    // Both model requests carried the image itself, as a data URL.
    expect(JSON.stringify(server.chatRequests[0].body)).toContain(DATA_URL);
    expect(JSON.stringify(server.chatRequests[1].body).split(DATA_URL)).toHaveLength(3);
    // The transcript reader gives the engine's parts back: base64, as the run had them.
    const messages = loadTranscript(cwd, result.sessionId).messages;
    expect(messages[0]).toEqual({ role: "user", content: [{ type: "text", text: "What is in it? Then read shot.png." }, { type: "image", image: B64, mediaType: "image/png" }] });
    expect(messages.find((m) => m.role === "tool")).toMatchObject({ parts: [{ type: "text" }, { type: "image", image: B64, mediaType: "image/png" }] });
  });

  it("replay of that trace is identical; a fork sends the model the same data URLs as the live run did", async () => {
    const result = await imageTwice();
    const session = await loadSession(traceFile(), result.sessionId);
    // People see the request with its image named, not a blank.
    expect((await summarizeSessions(traceFile()))[0].request).toBe(`What is in it? Then read shot.png. [image image/png, ${PNG.length} bytes]`);
    const replayed = await replay(session);
    expect(replayed.divergence?.message).toBeUndefined();
    expect(replayed.identical).toBe(true);
    // Fork at the second model call (after read_file's result): the conversation is rebuilt from the trace and blobs.
    const secondCall = session.lines.filter((l) => l.kind === "state" && (l as { state?: string }).state === "call_model")[1];
    server.enqueue(replies.text("Forked answer."));
    const forked = await collect(fork(session, { at: secondCall.seq, model: model(), tools: [readFileTool()], cwd }));
    expect(forked.result.reason).toBe("final_answer");
    expect(server.chatRequests[2].body.messages).toEqual(server.chatRequests[1].body.messages);
    // The fork's own lines name the blob too, and wrote no second copy.
    expect(readFileSync(traceFile(), "utf8")).not.toContain(B64);
    expect(blobFiles()).toEqual([HASH]);
  });

  it("the session goes on from its transcript with the image read back", async () => {
    const result = await imageTwice();
    server.enqueue(replies.text("Still a red dot."));
    await collect(query("And now?", { model: model(), tools: [readFileTool()], cwd, sessionId: result.sessionId }));
    expect(server.chatRequests[2].body.messages!.slice(0, -2)).toEqual(server.chatRequests[1].body.messages);
  });

  it("a tampered blob is refused, naming its file: by the transcript reader, a continued session, replay and the store", async () => {
    const result = await imageTwice();
    const file = join(blobsDir(), HASH);
    writeFileSync(file, Buffer.concat([PNG, Buffer.from("evil")]));
    expect(() => loadTranscript(cwd, result.sessionId)).toThrow(expect.objectContaining({ code: "BLOB_DAMAGED", message: expect.stringContaining(file) }));
    expect(() => fileBlobStore(cwd).get(HASH)).toThrow(/another hash \(it was changed or cut short after it was written\)/);
    const continued = await collect(query("And now?", { model: model(), cwd, sessionId: result.sessionId }));
    expect(continued.result.reason).not.toBe("final_answer");
    expect(continued.result.error?.message).toContain(file);
    expect(server.chatRequests).toHaveLength(2);
    const replayed = await replay(await loadSession(traceFile(), result.sessionId));
    expect(replayed.identical).toBe(false);
    expect(replayed.divergence?.reason).toContain(file);
    // A missing blob is named as missing.
    writeFileSync(file, "");
    const { rmSync } = await import("node:fs");
    rmSync(file);
    expect(() => loadTranscript(cwd, result.sessionId)).toThrow(expect.objectContaining({ code: "BLOB_NOT_FOUND", message: expect.stringContaining(`${file} is missing`) }));
  });

  it("a blob written once is not written again; once found damaged, the next write puts the right bytes back", () => {
    const store = fileBlobStore(cwd);
    store.put(HASH, PNG);
    const file = join(blobsDir(), HASH);
    writeFileSync(file, "not the image");
    // This process wrote the blob: no second write (and no read of the file) per record that names it.
    store.put(HASH, PNG);
    expect(readFileSync(file, "utf8")).toBe("not the image");
    expect(() => store.get(HASH)).toThrow(expect.objectContaining({ code: "BLOB_DAMAGED", message: expect.stringContaining(file) }));
    store.put(HASH, PNG);
    expect(readFileSync(file).equals(PNG)).toBe(true);
    expect(store.get(HASH).equals(PNG)).toBe(true);
    // Written through a temp file renamed into place: nothing else is left in the folder.
    expect(blobFiles()).toEqual([HASH]);
  });
});

describe("blobs: the workspace's .agent/ is untrusted", () => {
  it("a link planted where a blob goes is never followed: reading refuses it, writing replaces the link", async () => {
    const outside = tempDir("statecraft-blobs-outside-");
    try {
      const target = join(outside, "victim.txt");
      writeFileSync(target, "keep me");
      const { mkdirSync, symlinkSync, lstatSync } = await import("node:fs");
      mkdirSync(blobsDir(), { recursive: true });
      symlinkSync(target, join(blobsDir(), HASH));
      const store = fileBlobStore(cwd);
      expect(() => store.get(HASH)).toThrow(expect.objectContaining({ code: "BLOB_DAMAGED", message: expect.stringContaining("symbolic link") }));
      store.put(HASH, PNG);
      expect(readFileSync(target, "utf8")).toBe("keep me");
      expect(lstatSync(join(blobsDir(), HASH)).isSymbolicLink()).toBe(false);
      expect(store.get(HASH).equals(PNG)).toBe(true);
    } finally {
      removeDir(outside);
    }
  });

  it("a .agent/blobs that is a link is not written through: the run goes on, its lines keep the image, and it says why", async () => {
    const outside = tempDir("statecraft-blobs-outside-");
    try {
      const { mkdirSync, symlinkSync } = await import("node:fs");
      mkdirSync(join(cwd, ".agent"), { recursive: true });
      symlinkSync(outside, blobsDir());
      const errors: string[] = [];
      const logger = pino({ level: "warn" }, new Writable({ write: (chunk, _enc, done) => (errors.push(String((JSON.parse(String(chunk)) as { err?: string }).err ?? "")), done()) }));
      const model = scriptedModel([{ text: "A dot." }]);
      const { result } = await collect(query(imageInput("What is it?"), { model, cwd, logger }));
      expect(result.reason).toBe("final_answer");
      expect(readdirSync(outside)).toEqual([]);
      expect(readFileSync(traceFile(), "utf8")).toContain(B64);
      expect(errors.join("\n")).toMatch(/could not write the blob sha256:[0-9a-f]{64}: .*symbolic link/);
    } finally {
      removeDir(outside);
    }
  });
});

describe("blobs: a suspended run with an image", () => {
  const note = defineTool({
    name: "write_note",
    description: "Writes a note.",
    inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
    risk: "write",
    execute: ({ note }: { note: string }) => `wrote ${note}`,
  });

  it("its stored run names the image by hash; resume() gives the model the same image", async () => {
    const first = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "dot" } }] }]);
    const suspended = await collect(query(imageInput("Note what this is."), { model: first, tools: [note], cwd, permissions: { whenUnanswered: "suspend" } }));
    expect(suspended.result.status).toBe("suspended");
    if (suspended.result.status !== "suspended") throw new Error("not suspended");
    const stored = readFileSync(join(cwd, ".agent", "runs", `${suspended.result.sessionId}.json`), "utf8");
    expect(stored).not.toContain(B64);
    expect(stored).toContain(`sha256:${HASH}`);
    expect(blobFiles()).toEqual([HASH]);
    const second = scriptedModel([{ text: "Noted." }]);
    const resumed = await collect(resume(suspended.result.sessionId, { model: second, tools: [note], cwd, answers: { [suspended.result.pending[0].callId]: "allow" } }));
    expect(resumed.result.reason).toBe("final_answer");
    expect(second.requests[0].messages[0]).toEqual(first.requests[0].messages[0]);
    expect((second.requests[0].messages[0] as UserMessage).content).toContainEqual({ type: "image", image: B64, mediaType: "image/png" });
  });

  it("a tampered blob stops resume() with an error naming the blob's file", async () => {
    const first = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "dot" } }] }]);
    const suspended = await collect(query(imageInput("Note it."), { model: first, tools: [note], cwd, permissions: { whenUnanswered: "suspend" } }));
    if (suspended.result.status !== "suspended") throw new Error("not suspended");
    const file = join(blobsDir(), HASH);
    writeFileSync(file, "tampered");
    const second = scriptedModel([{ text: "Noted." }]);
    await expect(collect(resume(suspended.result.sessionId, { model: second, tools: [note], cwd, answers: { [suspended.result.pending[0].callId]: "allow" } }))).rejects.toMatchObject({
      code: "BLOB_DAMAGED",
      message: expect.stringContaining(file),
    });
    expect(second.requests).toHaveLength(0);
  });
});

describe("blobs: store \"memory\"", () => {
  it("keeps them in memory: lines name the image, nothing is written, the session and a replay read it back", async () => {
    const model = scriptedModel([{ text: "A dot." }, { text: "Still a dot." }]);
    const run = query(imageInput("What is it?"), { model, cwd, store: "memory" });
    const { result } = await collect(run);
    const lines = run.trace() as AnyTraceLine[];
    expect(JSON.stringify(lines)).not.toContain(B64);
    expect(JSON.stringify(run.transcript())).toContain(`sha256:${HASH}`);
    expect(existsSync(join(cwd, ".agent"))).toBe(false);
    const replayed = await replay(sessionOf(result.sessionId, lines));
    expect(replayed.identical).toBe(true);
    await collect(query("And now?", { model, cwd, store: "memory", sessionId: result.sessionId }));
    expect(model.requests[1].messages[0]).toEqual(model.requests[0].messages[0]);
  });
});

describe("blobs and redaction", () => {
  // Base64 that holds what redaction looks for: an AWS key id (after a "/", where a word starts), and an environment
  // secret's value. Written into a line, redaction would have changed the image's bytes.
  const payloads = [
    { name: "a key format", b64: "iVBORw0KGgo/AKIAIOSFODNN7EXAMPLE", env: {} },
    { name: "an environment secret's value", b64: "iVBORw0KGgoAQmxvYlNlY3JldFZhbHVlOTk5", env: { BLOBTEST_API_KEY: "QmxvYlNlY3JldFZhbHVlOTk5" } },
  ];
  for (const payload of payloads) {
    it(`an image whose base64 holds ${payload.name} keeps its bytes; a text part's secret is still redacted`, async () => {
      const bytes = Buffer.from(payload.b64, "base64");
      expect(bytes.toString("base64")).toBe(payload.b64);
      const saved = { ...process.env };
      Object.assign(process.env, payload.env);
      try {
        // The attack: written inline, the line's redaction alters the image.
        expect(redactLine(JSON.stringify({ image: payload.b64 }), secretValues())).not.toContain(payload.b64);
        const model = scriptedModel([{ text: "Seen." }, { text: "Again." }]);
        const secretText = "my key is AKIAIOSFODNN7EXAMPLE";
        const { result } = await collect(query({ role: "user", content: [{ type: "text", text: secretText }, { type: "image", image: new Uint8Array(bytes), mediaType: "image/png" }] }, { model, cwd }));
        const hash = createHash("sha256").update(bytes).digest("hex");
        expect(readFileSync(join(blobsDir(), hash)).equals(bytes)).toBe(true);
        const transcript = readFileSync(transcriptFile(result.sessionId), "utf8");
        expect(transcript).not.toContain("AKIAIOSFODNN7EXAMPLE");
        expect(transcript).toContain("[REDACTED]");
        await collect(query("Again?", { model, cwd, sessionId: result.sessionId }));
        expect((model.requests[1].messages[0] as UserMessage).content).toEqual([
          { type: "text", text: "my key is [REDACTED]" },
          { type: "image", image: payload.b64, mediaType: "image/png" },
        ]);
      } finally {
        for (const key of Object.keys(payload.env)) delete process.env[key];
        Object.assign(process.env, saved);
      }
    });
  }
});
