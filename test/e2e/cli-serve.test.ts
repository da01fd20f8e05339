import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli, startCli, type CliProcess } from "../cli/helpers/cli-process.js";
import { sseOf } from "../server/helpers.js";

const temps: string[] = [];
const procs: CliProcess[] = [];
afterEach(async () => {
  for (const proc of procs.splice(0)) {
    if (!proc.exited) proc.child.kill("SIGKILL");
    await proc.done;
  }
  for (const dir of temps.splice(0)) removeDir(dir);
});

function workspace(steps: unknown[]): string {
  const dir = makeTempDir("statecraft-serve-");
  temps.push(dir);
  writeFileSync(join(dir, "script.json"), JSON.stringify(steps));
  return dir;
}

describe("statecraft serve", { timeout: 120_000 }, () => {
  it("serves on 127.0.0.1 with the token of --token-file; a write waits for POST answers; SIGTERM stops it (exit 0)", async () => {
    const dir = workspace([{ text: "Writing.", toolCalls: [{ name: "write_file", input: { path: "out.txt", content: "served\n" } }] }, { text: "Written." }]);
    const token = "file-token-abcdefghijklmnop";
    writeFileSync(join(dir, "token"), `${token}\n`);
    const proc = startCli(["serve", "--port", "0", "--model", "script:script.json", "--token-file", "token"], { cwd: dir, keepStdinOpen: true });
    procs.push(proc);
    await proc.waitFor(/statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/);
    const base = /statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.screen)![1]!;
    // The token came from the file: none is printed.
    expect(proc.stdout).not.toMatch(/token:/);
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    expect((await fetch(`${base}/runs?sessionId=x`)).status).toBe(401);
    const started = await fetch(`${base}/runs`, { method: "POST", headers: auth, body: JSON.stringify({ input: "write out.txt" }) });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const seen: Array<{ type: string; pending?: Array<{ callId: string }>; reason?: string }> = [];
    for await (const m of sseOf(await fetch(`${base}/runs/${runId}/events`, { headers: auth }))) {
      seen.push(JSON.parse(m.data));
      if (seen.at(-1)!.type === "suspended") break;
    }
    const callId = seen.at(-1)!.pending![0]!.callId;
    expect((await fetch(`${base}/runs/${runId}/answers`, { method: "POST", headers: auth, body: JSON.stringify({ answers: { [callId]: "allow" } }) })).status).toBe(202);
    const rest: Array<{ type: string; reason?: string }> = [];
    for await (const m of sseOf(await fetch(`${base}/runs/${runId}/events`, { headers: { ...auth, "last-event-id": String(seen.length) } }))) rest.push(JSON.parse(m.data));
    expect(rest.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer" });
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("served\n");
    proc.child.kill("SIGTERM");
    expect((await proc.done).code).toBe(0);
  });

  it("prints a new token when none is given, and refuses a short token file and --session (exit 2)", async () => {
    const dir = workspace([{ text: "hi" }]);
    const proc = startCli(["serve", "--port", "0", "--model", "script:script.json"], { cwd: dir, keepStdinOpen: true });
    procs.push(proc);
    await proc.waitFor(/token: (\S{40,})/);
    const base = /statecraft serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.screen)![1]!;
    const token = /token: (\S+)/.exec(proc.screen)![1]!;
    expect((await fetch(`${base}/runs?sessionId=x`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    proc.child.kill("SIGTERM");
    await proc.done;
    writeFileSync(join(dir, "short"), "abc\n");
    const short = await runCli(["serve", "--port", "0", "--model", "script:script.json", "--token-file", "short"], { cwd: dir });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 16 characters/);
    const session = await runCli(["serve", "--port", "0", "--model", "script:script.json", "--session", "s"], { cwd: dir });
    expect(session.code).toBe(2);
    expect(session.stderr).toMatch(/--session is a request's choice/);
  });
});
