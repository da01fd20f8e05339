import { afterEach, describe, expect, it } from "vitest";
import { AnsweredOnPage, askThroughInspector } from "../../src/inspect/ask-through-inspector.js";
import type { InspectorRecord } from "../../src/inspect/protocol.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import type { AskAnswer, PermissionRequest } from "../../src/permissions/types.js";
import { pageClient, pageToken } from "./support/clients.js";

let inspector: Inspector | undefined;
afterEach(async () => {
  await inspector?.close();
  inspector = undefined;
});

const request = (id: string): PermissionRequest => ({ call: { id, name: "write_file", input: { path: "notes.md", content: "hi" } }, reason: "write_file is a write tool" });
type Asked = Extract<InspectorRecord, { kind: "permission" }>;

/** An `onAsk` that waits to be answered by the test, and keeps the signal it was given. */
function terminalPrompt() {
  let answer: ((value: AskAnswer) => void) | undefined;
  let signal: AbortSignal | undefined;
  return {
    onAsk: (req: PermissionRequest) =>
      new Promise<AskAnswer>((resolve) => {
        signal = req.signal;
        answer = resolve;
        // Withdrawn, as the terminal prompter is: answered deny, saying nothing to the run.
        req.signal?.addEventListener("abort", () => resolve("deny"), { once: true });
      }),
    answer: (value: AskAnswer) => answer!(value),
    get signal() {
      return signal;
    },
  };
}

describe("askThroughInspector", () => {
  it("with onAsk, asks the pages even when none is connected: a page opened later answers, and onAsk's question is withdrawn saying so", async () => {
    inspector = await startInspector({ permissionGraceMs: 0 });
    const run = inspector.attach({ sessionId: "late" });
    const terminal = terminalPrompt();
    const { onAsk } = askThroughInspector({ onAsk: terminal.onAsk }, inspector, run);
    expect(inspector.pages).toBe(0);
    const answer = Promise.resolve(onAsk!(request("c1")));
    // A request only a page can answer, made at the same time: once the no-page timer has denied it, it has fired.
    await expect(run.requestPermission(request("c2"))).resolves.toBe("deny");
    const page = await pageClient(inspector.port);
    const asked = (await page.next((r) => r.kind === "permission" && r.call !== null && (r.call as { id?: string }).id === "c1")) as Asked;
    expect(page.records.some((r) => r.kind === "permission_answer" && r.id === asked.id)).toBe(false);
    page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "allow", token: await pageToken(inspector.port) }));
    await expect(answer).resolves.toBe("allow");
    expect(terminal.signal?.aborted).toBe(true);
    expect(terminal.signal?.reason).toBeInstanceOf(AnsweredOnPage);
    expect((terminal.signal?.reason as Error).message).toBe("answered on the inspector's page: allowed");
    await page.next((r) => r.kind === "permission_answer" && r.id === asked.id && r.answer === "allow" && r.by === "page");
    page.ws.close();
  });

  it("onAsk answering first wins: the page's request is withdrawn as answered elsewhere", async () => {
    inspector = await startInspector();
    const run = inspector.attach({ sessionId: "terminal-first" });
    const terminal = terminalPrompt();
    const { onAsk } = askThroughInspector({ onAsk: terminal.onAsk }, inspector, run);
    const page = await pageClient(inspector.port);
    const answer = Promise.resolve(onAsk!(request("c1")));
    const asked = (await page.next((r) => r.kind === "permission")) as Asked;
    terminal.answer("allow_always");
    await expect(answer).resolves.toBe("allow_always");
    await page.next((r) => r.kind === "permission_answer" && r.id === asked.id && r.by === "elsewhere");
    expect(terminal.signal?.reason).not.toBeInstanceOf(AnsweredOnPage);
    page.ws.close();
  });

  it("without onAsk: a connected page is asked; with no page, whenUnanswered decides at once", async () => {
    inspector = await startInspector();
    const run = inspector.attach({ sessionId: "page-only" });
    expect(await askThroughInspector({}, inspector, run).onAsk!(request("a"))).toBe("deny");
    expect(await askThroughInspector({ whenUnanswered: "suspend" }, inspector, run).onAsk!(request("b"))).toBe("suspend");
    const page = await pageClient(inspector.port);
    await expect.poll(() => inspector!.pages).toBe(1);
    const answer = Promise.resolve(askThroughInspector({}, inspector, run).onAsk!(request("c")));
    const asked = (await page.next((r) => r.kind === "permission" && (r.call as { id?: string }).id === "c")) as Asked;
    page.ws.send(JSON.stringify({ type: "@statecraft.answer", id: asked.id, answer: "deny", token: await pageToken(inspector.port) }));
    await expect(answer).resolves.toBe("deny");
    page.ws.close();
  });
});
