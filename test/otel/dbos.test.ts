/**
 * A queued run (statecraft/dbos) carries the enqueuing client's W3C trace context: the worker's spans, exported by
 * another process over OTLP, join the client's trace; an answered suspension's resumed run joins the answering
 * client's trace and links to the suspended run's span.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, expect, it } from "vitest";
import { answer, closeClients, enqueueRun, watch } from "../../src/dbos/index.js";
import type { AgentEvent } from "../../src/index.js";
import { describeWithDatabase, freshDatabase, sql, until } from "../dbos/support.js";
import { removeDir, tempDir } from "../support/engine.js";
import { memoryTracing } from "./tracing.js";
import { startReceiver } from "./receiver.js";

describeWithDatabase("statecraft/dbos with statecraft/otel", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let root: string;
  let stopWorker: () => Promise<void>;
  const tracing = memoryTracing();
  const tracer = tracing.provider.getTracer("client");

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(tracing.provider);
    db = await freshDatabase();
    receiver = await startReceiver();
    root = tempDir("statecraft-otel-dbos-");
    const ready = join(root, "ready");
    const child = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "otel-worker.mjs"), JSON.stringify({ database: db.url, id: "otel-w", cwd: root, ready, endpoint: receiver.url })], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (out += d));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    stopWorker = async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    };
    await until(() => existsSync(ready) || child.exitCode !== null, "the worker to start", 90_000);
    if (!existsSync(ready)) throw new Error(`worker exited:\n${out}`);
  }, 120_000);

  afterAll(async () => {
    await stopWorker?.();
    await closeClients();
    await receiver?.close();
    await db?.drop();
    removeDir(root);
    trace.disable();
    context.disable();
  }, 60_000);

  const events = async (ids: { sessionId: string; runId: string }, stopAtSuspension = true) => {
    const out: AgentEvent[] = [];
    // Up to the run's end or its suspension (a watch goes on across a suspension to the run's end).
    for await (const event of watch({ database: db.url, ...ids })) {
      out.push(event);
      if (event.type === "turn_end" || (stopAtSuspension && event.type === "suspended")) break;
    }
    return out;
  };

  it("the worker's spans share the enqueuing client's trace id, under the client's span", async () => {
    let clientSpan: { traceId: string; spanId: string } | undefined;
    const ids = await tracer.startActiveSpan("client enqueue", async (span) => {
      clientSpan = span.spanContext();
      const queued = await enqueueRun("look", { database: db.url });
      span.end();
      return queued;
    });
    expect((await events(ids)).at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    await until(() => receiver.spans.some((s) => s.name === "invoke_agent worker-agent" && s.attributes["gen_ai.conversation.id"] === ids.sessionId), "the worker's spans");
    const spans = receiver.spans.filter((s) => s.traceId === clientSpan!.traceId);
    const agent = spans.find((s) => s.name === "invoke_agent worker-agent")!;
    expect(agent).toBeDefined();
    expect(agent.parentSpanId).toBe(clientSpan!.spanId);
    await until(() => receiver.spans.filter((s) => s.traceId === clientSpan!.traceId).length >= 4, "all of the run's spans");
    const all = receiver.spans.filter((s) => s.traceId === clientSpan!.traceId).map((s) => s.name).sort();
    expect(all).toEqual(["chat plan", "chat plan", "execute_tool look", "invoke_agent worker-agent"]);
  });

  it("a run that waits behind its session's suspended run joins its own enqueuing client's trace when its turn comes", async () => {
    const first = await enqueueRun("edit", { database: db.url });
    const suspended = (await events(first)).at(-1);
    if (suspended?.type !== "suspended") throw new Error(`not suspended: ${JSON.stringify(suspended)}`);
    await until(async () => (await sql<{ status: string }>(db.url, "SELECT status FROM statecraft.runs WHERE run_id = $1", [first.runId]))[0]?.status === "suspended", "the first run to be suspended");
    let clientSpan: { traceId: string; spanId: string } | undefined;
    const behind = await tracer.startActiveSpan("client enqueue behind", async (span) => {
      clientSpan = span.spanContext();
      const queued = await enqueueRun("look", { database: db.url, sessionId: first.sessionId });
      span.end();
      return queued;
    });
    await until(async () => (await sql<{ status: string }>(db.url, "SELECT status FROM statecraft.runs WHERE run_id = $1", [behind.runId]))[0]?.status === "waiting", "the second run to wait its turn");
    // Answered outside any span: the run that waited must still join the trace of the client that enqueued it.
    await answer({ database: db.url, ...first, answers: { [suspended.pending[0].callId]: "deny" } });
    expect((await events(behind)).at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    await until(() => receiver.spans.some((s) => s.traceId === clientSpan!.traceId && s.name.startsWith("invoke_agent")), "the waiting run's span in its client's trace");
    const agent = receiver.spans.find((s) => s.traceId === clientSpan!.traceId && s.name.startsWith("invoke_agent"))!;
    expect(agent.parentSpanId).toBe(clientSpan!.spanId);
    expect(agent.attributes).toMatchObject({ "gen_ai.conversation.id": first.sessionId });
  });

  it("a suspended queued run's span ends with it; the resumed piece joins the answering client's trace and links to it", async () => {
    const ids = await enqueueRun("edit", { database: db.url });
    const first = await events(ids);
    const suspended = first.at(-1);
    if (suspended?.type !== "suspended") throw new Error(`not suspended: ${JSON.stringify(suspended)}`);
    await until(() => receiver.spans.some((s) => s.attributes["gen_ai.conversation.id"] === ids.sessionId && s.attributes["statecraft.run.status"] === "suspended"), "the suspended span");
    const before = receiver.spans.find((s) => s.attributes["gen_ai.conversation.id"] === ids.sessionId && s.name.startsWith("invoke_agent"))!;

    // The worker records the suspension in statecraft.runs after its last event: answer() needs it there.
    await until(async () => (await sql<{ status: string }>(db.url, "SELECT status FROM statecraft.runs WHERE run_id = $1", [ids.runId]))[0]?.status === "suspended", "the run to be suspended");
    let answering: { traceId: string; spanId: string } | undefined;
    await tracer.startActiveSpan("client answer", async (span) => {
      answering = span.spanContext();
      await answer({ database: db.url, ...ids, answers: { [suspended.pending[0].callId]: "allow" } });
      span.end();
    });
    const second = await events(ids, false);
    expect(second.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    await until(() => receiver.spans.some((s) => s.traceId === answering!.traceId && s.name.startsWith("invoke_agent")), "the resumed span");
    const resumed = receiver.spans.find((s) => s.traceId === answering!.traceId && s.name.startsWith("invoke_agent"))!;
    expect(resumed.parentSpanId).toBe(answering!.spanId);
    expect(resumed.attributes).toMatchObject({ "gen_ai.conversation.id": ids.sessionId, "statecraft.resumed": true });
    expect(resumed.links).toEqual([{ traceId: before.traceId, spanId: before.spanId }]);
  });
});
