import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool, query, scriptedModel } from "../../src/index.js";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { collect, readJsonl, removeDir, tempDir } from "../support/engine.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";

const echo = defineTool({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  risk: "read",
  execute: (input: { text: string }) => `echo: ${input.text}`,
});

interface StateLine {
  kind: string;
  sessionId: string;
  seq: number;
  state: string;
  turn: number;
}

let cwd: string;
let traceFile: string;
let inspector: Inspector;
let browser: Browser;
let sessions: Map<string, StateLine[]>;

beforeAll(async () => {
  cwd = tempDir("statecraft-inspect-trace-");
  // Two runs into one trace: the page must offer both sessions.
  const tools = [echo];
  await collect(
    query("echo one, then answer", {
      cwd,
      tools,
      model: scriptedModel([{ text: "Let me echo.", toolCalls: [{ name: "echo", input: { text: "one" } }] }, { text: "Echoed: one. Done." }]),
    }),
  );
  await collect(query("just say hi", { cwd, model: scriptedModel([{ text: "Hi!" }]) }));
  traceFile = join(cwd, ".agent", "trace.jsonl");
  sessions = new Map();
  for (const line of readJsonl<StateLine>(traceFile)) {
    if (line.kind !== "state") continue;
    if (!sessions.has(line.sessionId)) sessions.set(line.sessionId, []);
    sessions.get(line.sessionId)!.push(line);
  }
  inspector = await startInspector({ traceFile });
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  removeDir(cwd);
});

describeWithBrowser("inspector: trace mode", () => {
  it("loads a trace given on the command line, offers its sessions, and the scrubber reaches every transition", async () => {
    expect(sessions.size).toBe(2);
    const { page } = browser;
    await page.goto(inspector.url);
    const picker = page.getByRole("combobox", { name: "session" });
    await expect.poll(() => picker.locator("option").count(), WAIT).toBe(2);

    const scrubber = page.getByRole("slider", { name: "scrubber" });
    const selected = page.getByTestId("selected");
    let shot = 0;
    for (const [sessionId, lines] of sessions) {
      const value = await picker.locator("option", { hasText: sessionId.slice(0, 8) }).getAttribute("value");
      await picker.selectOption(value!);
      // One position per transition.
      await expect.poll(() => scrubber.getAttribute("max"), WAIT).toBe(String(lines.length - 1));
      expect(await scrubber.getAttribute("min")).toBe("0");
      for (let i = 0; i < lines.length; i++) {
        await scrubber.fill(String(i));
        await expect.poll(() => selected.textContent(), WAIT).toContain(`seq ${lines[i].seq} · ${lines[i].state}`);
        expect(await selected.getAttribute("data-seq")).toBe(String(lines[i].seq));
        // The chart follows the scrubber: the transition's state is the current one, and only it.
        await expect.poll(() => page.locator('#chart [aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-state"))), WAIT).toEqual([lines[i].state]);
        // The timeline row of the transition is the selected one.
        expect(await page.locator('#timeline [role="option"][aria-selected="true"]').getAttribute("data-index")).toBe(String(i));
      }
      // At the end every state the run went through is visited, and arrows between them are marked taken.
      const visited = await page.locator("#chart [data-state][data-visited]").evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
      for (const line of lines) expect(visited).toContain(line.state);
      expect(await page.locator("#chart path[data-edge][data-taken]").count()).toBeGreaterThan(0);
      await screenshot(page, `trace-session-${++shot}`);
    }
  });

  it("shows, for a selected transition, the call and its result and the messages so far", async () => {
    const { page } = browser;
    const [sessionId, lines] = [...sessions].find(([, l]) => l.some((x) => x.state === "execute_tool"))!;
    const picker = page.getByRole("combobox", { name: "session" });
    await picker.selectOption((await picker.locator("option", { hasText: sessionId.slice(0, 8) }).getAttribute("value"))!);
    const index = lines.findIndex((l) => l.state === "append_tool_result");
    const scrubber = page.getByRole("slider", { name: "scrubber" });
    // The session switch redraws the timeline asynchronously: move the scrubber once it is this session's.
    await expect.poll(() => scrubber.getAttribute("max"), WAIT).toBe(String(lines.length - 1));
    const selectedSeq = async () => {
      const seq = await page.getByTestId("selected").getAttribute("data-seq");
      if (seq !== String(lines[index].seq)) await scrubber.fill(String(index));
      return seq;
    };
    await expect.poll(selectedSeq, WAIT).toBe(String(lines[index].seq));
    const inspect = page.getByRole("region", { name: "selected transition" });
    await expect.poll(() => inspect.textContent(), WAIT).toContain("echo: one");
    expect(await inspect.locator('.messages li[data-role="user"]').textContent()).toContain("echo one, then answer");
    expect(await inspect.locator('.messages li[data-role="tool"]').textContent()).toContain("echo: one");
    const call = page.locator('#calls li[data-call="echo"]');
    expect(await call.textContent()).toContain('"text": "one"');
    expect(await call.textContent()).toContain("echo: one");
    // The gauges at that point: one model call and one tool call made, against the run's limits (defaults 8, 12, 120 s).
    expect(await page.getByRole("meter", { name: "turns" }).getAttribute("aria-valuetext")).toBe("1 / 8");
    expect(await page.getByRole("meter", { name: "tool calls" }).getAttribute("aria-valuetext")).toBe("1 / 12");
    expect(await page.getByRole("meter", { name: "time" }).getAttribute("aria-valuetext")).toMatch(/ \/ 2 min$/);
    await screenshot(page, "trace-selected-transition");
  });

  it("opens a trace file chosen on the page too", async () => {
    const { page } = browser;
    const before = await page.getByRole("combobox", { name: "session" }).locator("option").count();
    const copy = join(cwd, "another-trace.jsonl");
    copyFileSync(traceFile, copy);
    await page.getByLabel("trace file").setInputFiles(copy);
    await expect.poll(() => page.getByRole("combobox", { name: "session" }).locator("option").count(), WAIT).toBe(before + 2);
  });

  it("opens a trace file dropped on the page, and says which lines it could not read", async () => {
    const { page } = browser;
    const picker = page.getByRole("combobox", { name: "session" });
    const before = await picker.locator("option").count();
    const text = readFileSync(traceFile, "utf8") + "this line is not JSON\n" + '{"no":"session"}\n';
    await page.evaluate((content) => {
      const data = new DataTransfer();
      data.items.add(new File([content], "dropped.jsonl", { type: "application/x-ndjson" }));
      document.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
    }, text);
    await expect.poll(() => picker.locator("option").count(), WAIT).toBe(before + 2);
    // The dropped file's first session is shown.
    expect(await picker.locator("option:checked").textContent()).toContain("dropped.jsonl");
    const problems = page.getByRole("alert");
    await expect.poll(() => problems.textContent(), WAIT).toContain("dropped.jsonl: 2 lines could not be read");
    expect(await problems.textContent()).toContain(`line ${text.split("\n").length - 2} (not JSON), ${text.split("\n").length - 1} (no sessionId or kind)`);
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(browser.requests.length).toBeGreaterThan(0);
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
