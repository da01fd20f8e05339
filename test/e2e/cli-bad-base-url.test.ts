import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { APIConnectionError } from "openai";
import { openaiModel } from "../../src/index.js";
import { classifyModelError } from "../../src/models/openai/error-classification.js";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const dirs: string[] = [];
const workspace = () => {
  const dir = makeTempDir("statecraft-base-url-");
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const rawLogLines = (stderr: string) => stderr.split("\n").filter((line) => line.trimStart().startsWith("{"));

describe("a base URL the CLI can't use, said once, with no raw log lines", { timeout: 60_000 }, () => {
  it.each([
    ["with a model named", { STATECRAFT_MODEL: "gpt-4o-mini" }],
    ["with no model named", { STATECRAFT_MODEL: undefined }],
  ])("OPENAI_BASE_URL on port 9 (fetch refuses it), %s: exit 2 at once, one sentence, no retries", async (_, env) => {
    const result = await runCli(["run", "hi"], { cwd: workspace(), env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk-test", ...env } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim()).toBe(
      "statecraft: http://127.0.0.1:9/v1 is on port 9, which fetch refuses to connect to (a port the Fetch standard blocks as unsafe, whatever listens there); " +
        "run the server on another port (e.g. 8080) and point --base-url (or OPENAI_BASE_URL, or baseUrl in the config) at it",
    );
    expect(result.stderr).not.toContain("is the server running");
    expect(rawLogLines(result.stderr)).toEqual([]);
  });

  it("a server that is not running, with no model named: the run's error, and no raw log line on stderr", async () => {
    const port = await closedPort();
    const result = await runCli(["run", "hi"], { cwd: workspace(), env: { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-test", STATECRAFT_MODEL: undefined } });
    expect(result.code).toBe(8);
    const output = result.stdout + result.stderr;
    expect(output).toContain(`could not connect to http://127.0.0.1:${port}/v1`);
    expect(output).toContain("is the server running");
    expect(rawLogLines(result.stderr)).toEqual([]);
    // Logs asked for are still JSON lines.
    const logged = await runCli(["run", "--log-level", "info", "hi"], { cwd: workspace(), env: { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-test", STATECRAFT_MODEL: undefined } });
    const logs = rawLogLines(logged.stderr).map((line) => JSON.parse(line) as { msg: string });
    expect(logs.map((l) => l.msg)).toContain("no model named and the server lists none; trying the default (set STATECRAFT_MODEL)");
  });
});

describe("openaiModel() and a port fetch refuses", () => {
  it("refuses the option at once, naming where the URL came from", () => {
    expect(() => openaiModel({ model: "m", baseURL: "http://localhost:6000/v1" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("http://localhost:6000/v1 is on port 6000, which fetch refuses to connect to") }),
    );
    expect(() => openaiModel({ model: "m" }, { OPENAI_BASE_URL: "http://localhost:25/v1" })).toThrow(expect.objectContaining({ message: expect.stringContaining("point OPENAI_BASE_URL at it") }));
    expect(() => openaiModel({ model: "m", baseURL: "http://localhost:8080/v1" })).not.toThrow();
  });

  it("a request fetch refused for its port (one the list does not know) is not retried", async () => {
    // What Node's fetch throws for a blocked port, as the OpenAI SDK wraps it.
    let thrown: unknown;
    try {
      await fetch("http://127.0.0.1:9/");
    } catch (error) {
      thrown = error;
    }
    expect((thrown as Error & { cause?: Error }).cause?.message).toBe("bad port");
    const { error } = classifyModelError(new APIConnectionError({ cause: thrown as Error }), { baseURL: "http://127.0.0.1:9/v1", model: "m", apiKeySource: "none", apiKey: "" });
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("is on port 9, which fetch refuses to connect to");
  });
});
