import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, startCliOnTerminal, type CliProcess } from "../cli/helpers/cli-process.js";
import { BROWSER_TEST_TIMEOUT, openBrowser, screenshot, WAIT, type Browser } from "../inspect/support/browser.js";

// `statecraft run --inspect` on a real pseudo-terminal, asking at the terminal, and a page opened in headless Chromium
// only after the question was asked: the page shows the question with working buttons; the first answer wins.

let browser: Browser;
beforeAll(async () => {
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);
afterAll(async () => {
  await browser?.close();
});

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const writeNotes = { toolCalls: [{ name: "write_file", input: { path: "notes.md", content: "hello\n" } }] };

/** Starts `statecraft run --inspect` on a terminal, in a temp folder, with a scripted model taking `steps`. */
function startRun(steps: unknown[]): { cli: CliProcess; dir: string } {
  const dir = makeTempDir("statecraft-late-page-");
  cleanups.push(() => removeDir(dir));
  writeFileSync(join(dir, "case.json"), JSON.stringify(steps));
  const cli = startCliOnTerminal(["run", "--inspect", "--model", "script:case.json", "write it"], { cwd: dir, env: { NO_COLOR: "1" } });
  cleanups.push(() => {
    if (!cli.exited) cli.child.kill("SIGKILL");
  });
  return { cli, dir };
}

/** Once the terminal has asked, opens the inspector's page (the address the CLI printed) in a new tab. */
async function openAfterTheQuestion(cli: CliProcess) {
  await cli.waitFor("n: no ›");
  const url = /inspector: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(cli.screen)![1]!;
  const page = await browser.context.newPage();
  await page.goto(url);
  return {
    page,
    panel: page.getByRole("region", { name: "permission request" }),
    allow: page.getByRole("button", { name: "Allow", exact: true }),
    deny: page.getByRole("button", { name: "Deny", exact: true }),
  };
}

describe("statecraft run --inspect: a page opened after the terminal asked", { timeout: BROWSER_TEST_TIMEOUT }, () => {
  it("shows the waiting call with Allow and Deny, also after a reload; Allow on the page runs it and the terminal says the page answered", async () => {
    const { cli, dir } = startRun([writeNotes, { text: "Written." }]);
    const { page, panel, allow, deny } = await openAfterTheQuestion(cli);
    try {
      await expect.poll(() => panel.textContent().catch(() => ""), WAIT).toContain("write_file wants to run");
      await expect.poll(() => allow.isEnabled().catch(() => false), WAIT).toBe(true);
      expect(await deny.isEnabled()).toBe(true);
      await page.reload();
      await expect.poll(() => panel.textContent().catch(() => ""), WAIT).toContain('"path": "notes.md"');
      await expect.poll(() => allow.isEnabled().catch(() => false), WAIT).toBe(true);
      await screenshot(page, "permission-late-page");
      expect(existsSync(join(dir, "notes.md"))).toBe(false); // nothing ran before an answer
      await allow.click();
      const result = await cli.done;
      expect(result.code).toBe(0);
      expect(cli.screen).toContain("n: no › (answered on the inspector's page: allowed)");
      expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe("hello\n");
    } finally {
      await page.close();
    }
  });

  it("an answer at the terminal wins: the page's question goes, and the page says the terminal answered", async () => {
    // A second question keeps the run (and its inspector) alive while the page is read after the first answer.
    const { cli, dir } = startRun([writeNotes, { toolCalls: [{ name: "bash", input: { command: "echo second > second.txt" } }] }, { text: "Done." }]);
    const { page, panel, allow } = await openAfterTheQuestion(cli);
    try {
      await expect.poll(() => allow.isEnabled().catch(() => false), WAIT).toBe(true);
      const asked = cli.mark();
      cli.write("y");
      await cli.waitFor("n: no ›", { since: asked });
      expect(cli.screen.slice(asked)).toContain("allowed once");
      const status = page.getByRole("status", { name: "permission answered elsewhere" });
      await expect.poll(() => status.textContent().catch(() => ""), WAIT).toBe("write_file: answered in the terminal before this page did");
      await expect.poll(() => panel.textContent().catch(() => ""), WAIT).toContain("echo second > second.txt");
      await screenshot(page, "permission-answered-in-terminal");
      expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe("hello\n");
      cli.write("n");
      const result = await cli.done;
      expect(result.code).toBe(6);
      expect(existsSync(join(dir, "second.txt"))).toBe(false);
    } finally {
      await page.close();
    }
  });
});
