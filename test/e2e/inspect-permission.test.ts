import { afterAll, beforeAll, expect, it } from "vitest";
import { startInspector, type Inspector } from "../../src/inspect/server.js";
import { MAX_SHOWN_CALL_CHARS } from "../../src/inspect/permission-call.js";
import { BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, screenshot, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";
import { connect, pageToken } from "../inspect/support/clients.js";

let inspector: Inspector;
/** Another inspector, whose token must not work on the first. */
let other: Inspector;
let browser: Browser;

beforeAll(async () => {
  inspector = await startInspector();
  other = await startInspector();
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  await other?.close();
});

describeWithBrowser("inspector: answering permission requests from the page", () => {
  it("shows a pending request with Allow and Deny; a click resolves it and the buttons go away", async () => {
    const { page } = browser;
    await page.goto(inspector.url);
    await inspector.waitForPage({ timeoutMs: 30_000 });
    const run = inspector.attach({ sessionId: "perm-run", input: "write a note" });
    const allow = page.getByRole("button", { name: "Allow", exact: true });
    const deny = page.getByRole("button", { name: "Deny", exact: true });
    expect(await allow.count()).toBe(0);

    const first = run.requestPermission({ call: { id: "call-1", name: "write_note", input: { note: "hello" } }, reason: "write_note is a write tool and mode default asks for it" });
    await expect.poll(() => allow.isVisible(), WAIT).toBe(true);
    expect(await deny.isVisible()).toBe(true);
    const panel = page.getByRole("region", { name: "permission request" });
    expect(await panel.textContent()).toContain("write_note wants to run");
    expect(await panel.textContent()).toContain('"note": "hello"');
    await screenshot(page, "permission-pending");
    await allow.click();
    await expect(first).resolves.toBe("allow");
    await expect.poll(() => allow.count(), WAIT).toBe(0);

    const second = run.requestPermission({ call: { id: "call-2", name: "bash", input: { command: "rm -rf build" } }, reason: "bash is an exec tool" });
    await expect.poll(() => deny.isVisible(), WAIT).toBe(true);
    expect(await panel.textContent()).toContain("rm -rf build");
    await deny.click();
    await expect(second).resolves.toBe("deny");
    await expect.poll(() => deny.count(), WAIT).toBe(0);
  });

  it("shows one request at a time, oldest first, and says how many more wait", async () => {
    const { page } = browser;
    const run = inspector.attach({ sessionId: "perm-run-2" });
    const a = run.requestPermission({ call: { id: "a", name: "first_tool", input: {} }, reason: "asked" });
    const b = run.requestPermission({ call: { id: "b", name: "second_tool", input: {} }, reason: "asked" });
    const allow = page.getByRole("button", { name: "Allow", exact: true });
    const panel = page.getByRole("region", { name: "permission request" });
    await expect.poll(() => panel.textContent(), WAIT).toContain("first_tool wants to run");
    expect(await panel.textContent()).toContain("1 more waiting");
    expect(await allow.count()).toBe(1);
    await allow.click();
    await expect(a).resolves.toBe("allow");
    await expect.poll(() => panel.textContent(), WAIT).toContain("second_tool wants to run");
    await allow.click();
    await expect(b).resolves.toBe("allow");
  });

  it("a page that opens while a request waits is shown it", async () => {
    const run = inspector.attach({ sessionId: "perm-run-3" });
    const waiting = run.requestPermission({ call: { id: "late", name: "late_tool", input: { n: 1 } }, reason: "asked" });
    const other = await browser.context.newPage();
    try {
      await other.goto(inspector.url);
      const allow = other.getByRole("button", { name: "Allow", exact: true });
      await expect.poll(() => allow.isVisible(), WAIT).toBe(true);
      expect(await other.getByRole("region", { name: "permission request" }).textContent()).toContain("late_tool");
      await allow.click();
      await expect(waiting).resolves.toBe("allow");
    } finally {
      await other.close();
    }
  });

  it("a page opened or reloaded while a request waits shows Allow and Deny, both enabled, and its answer counts", async () => {
    const run = inspector.attach({ sessionId: "perm-run-late" });
    const waiting = run.requestPermission({ call: { id: "late2", name: "late_tool_2", input: { n: 2 } }, reason: "asked" });
    const late = await browser.context.newPage();
    try {
      await late.goto(inspector.url);
      const allow = late.getByRole("button", { name: "Allow", exact: true });
      const deny = late.getByRole("button", { name: "Deny", exact: true });
      await expect.poll(() => allow.isEnabled(), WAIT).toBe(true);
      expect(await deny.isEnabled()).toBe(true);
      await late.reload();
      await expect.poll(() => late.getByRole("region", { name: "permission request" }).textContent(), WAIT).toContain("late_tool_2");
      await expect.poll(() => allow.isEnabled(), WAIT).toBe(true);
      expect(await deny.isVisible()).toBe(true);
      expect(await deny.isEnabled()).toBe(true);
      await deny.click();
      await expect(waiting).resolves.toBe("deny");
      await expect.poll(() => allow.isVisible(), WAIT).toBe(false);
    } finally {
      await late.close();
    }
  });

  it("shows a 50 000-character command whole, in a box that scrolls, and says to read it all; Allow works", async () => {
    const { page } = browser;
    const run = inspector.attach({ sessionId: "perm-long" });
    const command = `echo ${"a".repeat(50_000 - 16)} ; rm -rf ~`;
    expect(command).toHaveLength(50_000);
    const waiting = run.requestPermission({ call: { id: "long", name: "bash", input: { command } }, reason: "bash is an exec tool" });
    const allow = page.getByRole("button", { name: "Allow", exact: true });
    const input = page.locator("#permission-input");
    // Records reach the page once per frame: wait for this request to be the one shown, then for its buttons.
    await expect.poll(async () => ((await input.textContent().catch(() => "")) ?? "").includes(command), WAIT).toBe(true);
    await expect.poll(() => allow.isEnabled().catch(() => false), WAIT).toBe(true);
    const shown = await input.textContent();
    expect(shown).toContain(command); // the tail too
    expect(shown!.trimEnd().endsWith('rm -rf ~"\n}')).toBe(true);
    expect(await input.evaluate((el) => el.scrollHeight > el.clientHeight && getComputedStyle(el).overflowY === "auto")).toBe(true);
    expect(await page.getByRole("note").textContent()).toMatch(/The input is [\d,]+ characters long: scroll through all of it before you allow it/);
    await screenshot(page, "permission-long-command");
    await allow.click();
    await expect(waiting).resolves.toBe("allow");
  });

  it("turns Allow off for a command longer than the page can show, and says so; Deny still works", async () => {
    const { page } = browser;
    const run = inspector.attach({ sessionId: "perm-huge" });
    const command = `echo ${"a".repeat(MAX_SHOWN_CALL_CHARS)} ; rm -rf ~`;
    const waiting = run.requestPermission({ call: { id: "huge", name: "bash", input: { command } }, reason: "bash is an exec tool" });
    const allow = page.getByRole("button", { name: "Allow", exact: true });
    const deny = page.getByRole("button", { name: "Deny", exact: true });
    // This request, not the one before it, must be the one shown before its buttons are read.
    await expect.poll(async () => ((await page.getByRole("note").textContent().catch(() => "")) ?? "").startsWith("Allow is off"), WAIT).toBe(true);
    await expect.poll(() => deny.isEnabled().catch(() => false), WAIT).toBe(true);
    expect(await allow.isDisabled()).toBe(true);
    expect(await page.locator("#permission-input").textContent()).not.toContain("rm -rf ~");
    expect(await page.getByRole("note").textContent()).toMatch(/^Allow is off: the call is \d+ characters of JSON and the page shows at most 1000000 whole, so it was cut\. Deny it here, or answer it in the terminal\.$/);
    await screenshot(page, "permission-cut-command");
    await allow.click({ force: true }); // a disabled button does nothing, even clicked
    await deny.click();
    await expect(waiting).resolves.toBe("deny");
  });

  it("a client without the page's token cannot answer while the page is open; the page still can", async () => {
    const { page } = browser;
    const run = inspector.attach({ sessionId: "perm-race" });
    const waiting = run.requestPermission({ call: { id: "race", name: "bash", input: { command: "rm -rf ~" } }, reason: "bash is an exec tool" });
    const allow = page.getByRole("button", { name: "Allow", exact: true });
    await expect.poll(async () => ((await page.locator("#permission-input").textContent().catch(() => "")) ?? "").includes('"rm -rf ~"'), WAIT).toBe(true);
    await expect.poll(() => allow.isEnabled().catch(() => false), WAIT).toBe(true);
    const id = await page.locator("#permission").getAttribute("data-request");
    for (const extra of [{}, { token: "guess" }, { token: await pageToken(other.port) }]) {
      const rogue = await connect(inspector.port, { origin: `http://127.0.0.1:${inspector.port}` });
      rogue.send(JSON.stringify({ type: "@statecraft.answer", id, answer: "deny", ...extra }));
      rogue.close();
    }
    const refusals = async () => ((await page.locator("#problems").textContent()) ?? "").split(`may not answer permission request ${id}`).length - 1;
    await expect.poll(refusals, WAIT).toBe(3);
    expect(await allow.isEnabled()).toBe(true);
    await allow.click();
    await expect(waiting).resolves.toBe("allow");
  });

  it("made no request outside 127.0.0.1 and raised no page error", () => {
    expect(foreignRequests(browser.requests)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
