import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool, query, scriptedModel } from "../../src/index.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { BROWSER_TEST_TIMEOUT, openBrowser, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

const note = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: () => "wrote it",
});

let cwd: string;
let inspector: Inspector;
let browser: Browser;
let callId: string;

beforeAll(async () => {
  cwd = tempDir("statecraft-inspect-durable-");
  const { result } = await collect(
    query("note it", { cwd, tools: [note], model: scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "a" } }] }]), permissions: { whenUnanswered: "suspend" } }),
  );
  if (result.status !== "suspended") throw new Error("the run did not suspend");
  callId = result.pending[0].callId;
  inspector = await startInspector({ traceFile: join(cwd, ".agent", "trace.jsonl") });
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  removeDir(cwd);
});

describeWithBrowser("inspector: a suspended session", () => {
  it("is shown as suspended, with the calls it waits on", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    const picker = page.getByRole("combobox", { name: "session" });
    await expect.poll(() => picker.locator("option").count(), WAIT).toBe(1);
    await expect.poll(() => picker.locator("option").first().textContent(), WAIT).toContain(`(suspended: waiting on write_note ${callId})`);
    expect(browser.errors).toEqual([]);
  });
});
