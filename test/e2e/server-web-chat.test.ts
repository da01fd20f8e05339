import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build, preview, type PreviewServer } from "vite";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCli, type CliProcess } from "../cli/helpers/cli-process.js";
import { ARTIFACTS, BROWSER_TEST_TIMEOUT, foreignRequests, openBrowser, WAIT, type Browser, describeWithBrowser } from "../inspect/support/browser.js";
import { removeDir, tempDir } from "../support/engine.js";

/*
 * The chat page of examples/web-chat (React, the AI SDK's useChat), built with Vite and served by `vite preview`,
 * whose proxy passes /api to a real `statecraft serve` (the CLI, a scripted model, the built-in tools) with the
 * token. Driven in headless Chromium as a person would: type, read the streamed answer, approve a write, reload while
 * the run still works (a bash command waits for a file the test writes) and see the run go on to its answer.
 */

const example = join(import.meta.dirname, "..", "..", "examples", "web-chat");
const SCRIPT = [
  { text: "I'll write hello.txt for you.", toolCalls: [{ name: "write_file", input: { path: "hello.txt", content: "hi from the browser\n" } }] },
  { text: "Written. Now I wait for the go signal.", toolCalls: [{ name: "bash", input: { command: "while [ ! -e go ]; do sleep 0.05; done; cat hello.txt" } }] },
  { text: "All done: hello.txt says hi from the browser." },
];

let dir: string;
let serve: CliProcess;
let site: PreviewServer;
let browser: Browser;
let pageUrl: string;

beforeAll(async () => {
  dir = tempDir("statecraft-web-chat-");
  const work = join(dir, "work");
  mkdirSync(work);
  writeFileSync(join(work, "script.json"), JSON.stringify(SCRIPT));
  const token = "browser-chat-token-0123456789";
  writeFileSync(join(dir, "token"), token);
  // bash is allowed outright (it only waits for the test here); the write is asked, as by default.
  serve = startCli(["serve", "--port", "0", "-C", work, "--model", "script:script.json", "--token-file", join(dir, "token"), "--allow", "bash"], { cwd: work, keepStdinOpen: true });
  await serve.waitFor(/statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/);
  process.env.STATECRAFT_URL = /statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(serve.screen)![1]!;
  process.env.STATECRAFT_TOKEN = token;
  const outDir = join(dir, "site");
  await build({ root: example, logLevel: "error", cacheDir: join(dir, ".vite"), build: { outDir, emptyOutDir: true } });
  site = await preview({ root: example, logLevel: "error", cacheDir: join(dir, ".vite"), build: { outDir }, preview: { host: "127.0.0.1", port: 0, strictPort: false } });
  pageUrl = site.resolvedUrls!.local[0]!;
  browser = await openBrowser();
}, BROWSER_TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  if (serve && !serve.exited) {
    serve.child.kill("SIGTERM");
    await serve.done;
  }
  if (dir) removeDir(dir);
});

describeWithBrowser("examples/web-chat against statecraft serve", () => {
  it("streams the answer, asks to approve the write, goes on after approval and after a reload mid-run", async () => {
    const { page } = browser;
    await page.goto(pageUrl);
    await page.getByRole("textbox", { name: "message" }).fill("Please write hello.txt");
    await page.getByRole("button", { name: "Send" }).click();

    const user = page.locator('[data-role="user"]');
    const assistant = page.locator('[data-role="assistant"]');
    await expect.poll(() => user.first().textContent(), WAIT).toBe("Please write hello.txt");
    await expect.poll(() => assistant.first().locator(".text").first().textContent(), WAIT).toBe("I'll write hello.txt for you.");
    const write = page.getByRole("region", { name: "tool write_file" });
    await expect.poll(() => write.getAttribute("data-state"), WAIT).toBe("approval-requested");
    expect(await write.locator(".input").textContent()).toContain("hi from the browser");
    await expect.poll(() => write.getByRole("button", { name: "Deny" }).isVisible(), WAIT).toBe(true);
    // The picture in docs/server.md: kept with the test's artifacts, copied into docs/ with UPDATE_DOCS_SCREENSHOT=1.
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "server-web-chat.png");
    await page.locator("main").screenshot({ path: shot });
    if (process.env.UPDATE_DOCS_SCREENSHOT === "1") copyFileSync(shot, join(process.cwd(), "docs", "server-web-chat.png"));

    await write.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => write.getAttribute("data-state"), WAIT).toBe("output-available");
    expect(readFileSync(join(dir, "work", "hello.txt"), "utf8")).toBe("hi from the browser\n");
    const bash = page.getByRole("region", { name: "tool bash" });
    await expect.poll(() => bash.getAttribute("data-state"), WAIT).toBe("input-available");

    // A reload while bash still waits: the page comes back with the chat, and the run's stream is resumed.
    await page.reload();
    await expect.poll(() => user.first().textContent(), WAIT).toBe("Please write hello.txt");
    await expect.poll(() => page.getByRole("region", { name: "tool write_file" }).getAttribute("data-state"), WAIT).toBe("output-available");
    await expect.poll(() => page.getByRole("region", { name: "tool bash" }).getAttribute("data-state"), WAIT).toBe("input-available");
    writeFileSync(join(dir, "work", "go"), "");
    await expect.poll(() => page.getByRole("region", { name: "tool bash" }).getAttribute("data-state"), WAIT).toBe("output-available");
    await expect.poll(() => assistant.last().locator(".text").last().textContent(), WAIT).toBe("All done: hello.txt says hi from the browser.");
    expect(await page.getByRole("region", { name: "tool bash" }).locator(".output").textContent()).toContain("hi from the browser");
    await expect.poll(() => page.locator("main").getAttribute("data-status"), WAIT).toBe("ready");
    // One user message and the answer's parts once each: nothing doubled by the replay.
    expect(await user.count()).toBe(1);
    expect(await page.getByRole("region", { name: "tool write_file" }).count()).toBe(1);
    expect(browser.errors).toEqual([]);
    expect(foreignRequests(browser.requests)).toEqual([]);
  });
});
