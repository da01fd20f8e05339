import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli, startCli } from "../cli/helpers/cli-process.js";
import { connect, pageClient } from "../inspect/support/clients.js";

const temps: string[] = [];
const workspace = () => {
  const dir = makeTempDir("statecraft-cli-inspect-");
  temps.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

describe("statecraft inspect", { timeout: 60_000 }, () => {
  it("serves the inspector over a trace on 127.0.0.1, prints its address, and stops on Ctrl-C", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "hello" }]));
    const recorded = await runCli(["run", "--model", "script:case.json", "say hello"], { cwd: dir });
    expect(recorded.code).toBe(0);
    const cli = startCli(["inspect", join(dir, ".agent", "trace.jsonl")], { cwd: dir });
    await cli.waitFor(/inspector: http:\/\/127\.0\.0\.1:\d+\/\n/);
    const url = cli.stdout.match(/inspector: (\S+)/)![1];
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("statecraft inspector");
    const trace = await fetch(new URL("/trace", url));
    expect(trace.status).toBe(200);
    expect(await trace.text()).toContain('"state":"done"');
    cli.child.kill("SIGINT");
    const result = await cli.done;
    expect(result.code).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it("a missing trace file or a bad port is a usage error", async () => {
    const dir = workspace();
    const missing = await runCli(["inspect", "nope.jsonl"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no trace file at");
    const port = await runCli(["inspect", "--port", "99999"], { cwd: dir });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port takes a port number");
    for (const size of ["12XB", "0", "-5MB", "1.5MB", "lots"]) {
      const bad = await runCli(["inspect", "--max-bytes", size], { cwd: dir });
      expect(bad.code, size).toBe(2);
      expect(bad.stderr, size).toContain("--max-bytes takes a size such as 512KB, 64MB or 1GB");
    }
  });

  it("--allow-origin (repeatable) lets browser apps of those origins connect, and no other; a bad origin is a usage error", async () => {
    const dir = workspace();
    for (const [origin, message] of [["localhost:5173", "not an http or https origin"], ["http://localhost:5173/app", "more than an origin"], ["*", "wildcard"]]) {
      const bad = await runCli(["inspect", "--allow-origin", origin], { cwd: dir });
      expect(bad.code, origin).toBe(2);
      expect(bad.stderr, origin).toContain(`--allow-origin: ${origin}`);
      expect(bad.stderr, origin).toContain(message);
    }
    const cli = startCli(["inspect", "--allow-origin", "http://localhost:5173", "--allow-origin", "http://localhost:3000"], { cwd: dir });
    try {
      await cli.waitFor(/inspector: http:\/\/127\.0\.0\.1:\d+\/\n/);
      const port = Number(cli.stdout.match(/127\.0\.0\.1:(\d+)/)![1]);
      for (const origin of ["http://localhost:5173", "http://localhost:3000"]) (await connect(port, { origin })).close();
      await expect(connect(port, { origin: "http://localhost:5174" })).rejects.toThrow("HTTP 403");
    } finally {
      cli.child.kill("SIGINT");
      await cli.done;
    }
  });

  it("keeps at most --max-bytes of records, and says so when it drops some", async () => {
    const dir = workspace();
    const cli = startCli(["inspect", "--max-bytes", "1MB"], { cwd: dir });
    await cli.waitFor(/inspector: http:\/\/127\.0\.0\.1:\d+\/\n/);
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(cli.stdout)![1]);
    const client = await connect(port);
    const base = { createdAt: "1767225600000", id: null, _version: "0.7.2" };
    client.send(JSON.stringify({ type: "@xstate.actor", name: "big", sessionId: "x:0", definition: JSON.stringify({ id: "big", initial: "a", states: { a: {} } }), ...base }));
    // Strings are cut at 20 000 characters in records: 200 snapshots of 20 KB make 4 MB.
    for (let i = 0; i < 200; i++) client.send(JSON.stringify({ type: "@xstate.snapshot", sessionId: "x:0", event: { type: "T" }, snapshot: { status: "active", value: "a", context: { i, blob: "x".repeat(20_000) } }, ...base }));
    client.send("done sending");
    const page = await pageClient(port);
    await page.next((r) => r.kind === "problem" && r.message.includes("done sending"));
    const replayed = page.raw.find((m) => m.startsWith('{"type":"records"'))!;
    expect(Buffer.byteLength(replayed)).toBeLessThan(1024 * 1024 + 1024);
    expect(page.records.filter((r) => r.kind === "problem").map((r) => (r as { message: string }).message)).toContainEqual(expect.stringContaining("keeps at most 1 MB of records (maxBytes)"));
    client.close();
    page.ws.close();
    cli.child.kill("SIGINT");
    expect((await cli.done).code).toBe(0);
  });
});

describe("statecraft run --inspect", { timeout: 60_000 }, () => {
  it("prints the inspector's address on stderr before the first model call, and the run goes on", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "inspected answer" }]));
    const result = await runCli(["run", "--inspect", "--model", "script:case.json", "--json", "go"], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\//);
    const events = result.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; state?: string });
    // The inspector comes first, before any state of the run.
    expect(events[0]).toEqual({ type: "inspector", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/) });
    expect(events.findIndex((e) => e.type === "state" && e.state === "call_model")).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe("turn_end");
  });

  it("--port without --inspect is a usage error", async () => {
    const dir = workspace();
    const result = await runCli(["run", "--port", "8080", "--model", "script:none.json", "x"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--port goes with --inspect");
  });
});
