import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool, query, scriptedModel, type AgentEvent } from "../../src/index.js";
import { collect, removeDir, tempDir } from "../support/engine.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

const writeNote = defineTool({
  name: "write_note",
  description: "Writes a note.",
  inputSchema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
  risk: "write",
  execute: (input: { note: string }) => `wrote ${input.note}`,
});

let cwd: string;
let browser: Browser;
beforeAll(async () => {
  cwd = tempDir("statecraft-inspect-query-");
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);
afterAll(async () => {
  await browser?.close();
  removeDir(cwd);
});

describeWithBrowser("query(input, { inspect })", () => {
  it("yields the inspector's url first; with a page connected, a permission request waits for the page and Allow lets the run go on", async () => {
    // The model answers once the page is there, so the permission request finds it connected.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedModel([
      async () => {
        await gate;
        return { text: "Writing.", toolCalls: [{ name: "write_note", input: { note: "hi" } }] };
      },
      { text: "Written." },
    ]);
    const run = query("write a note", { model, cwd, tools: [writeNote], inspect: { port: 0 } });
    const first = await run.next();
    expect(first.value).toEqual({ type: "inspector", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/) });
    const url = (first.value as Extract<AgentEvent, { type: "inspector" }>).url;
    await browser.page.goto(url);
    // The page is connected before the run reaches ask_permission: the run continues only once it's answered there.
    await expect.poll(() => browser.page.locator("#chart [data-state]").count(), WAIT).toBeGreaterThan(0);
    const rest = collect(run);
    release();
    const allow = browser.page.getByRole("button", { name: "Allow", exact: true });
    await expect.poll(() => allow.isVisible(), WAIT).toBe(true);
    await allow.click();
    await expect.poll(() => browser.page.locator('#chart [aria-current="true"]').getAttribute("data-state"), WAIT).toBe("done");
    // Leave before the run's inspector closes, so the page doesn't try to reconnect.
    await browser.page.goto("about:blank");
    const { events, result } = await rest;
    expect(result.reason).toBe("final_answer");
    expect(events.find((e) => e.type === "permission_request")).toBeDefined();
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ result: { content: "wrote hi", isError: false } });
    expect(events.filter((e) => e.type === "inspector")).toHaveLength(0);
    // The run's inspector closed with the run.
    await expect(fetch(url)).rejects.toThrow();
  });

  it("with no page connected, a call that needs asking is denied as without the inspector", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: "write_note", input: { note: "x" } }] }]);
    const { events, result } = await collect(query("x", { model, cwd, tools: [writeNote], inspect: {} }));
    expect(events[0].type).toBe("inspector");
    expect(result.reason).toBe("permission_denied");
  });

  it("checks its options", () => {
    expect(() => query("x", { model: scriptedModel([]), inspect: { port: 70000 } })).toThrow(/options.inspect must be/);
  });

  it("the page made no request outside 127.0.0.1", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
