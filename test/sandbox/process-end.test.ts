import fs from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { bwrapArgs, resolveSandbox, sandboxLayout, sandboxSupport } from "../../src/sandbox/index.js";
import { runInProcessGroup } from "../../src/tools/process.js";
import { tempDir } from "./support.js";

// What the per-process cost work changed (docs/sandbox.md, "What a sandboxed process costs"): a sandboxed call ends
// when the sandbox's init (told by bubblewrap's --info-fd) has ended or is only being torn down, and an allow-list's
// bridge is socat where the machine has it. Each must still leave nothing of the sandbox running, and give the
// command's status and its waits as they are.

/** Live (not zombie) processes whose command line holds `token`, anywhere on this machine. */
function running(token: string): number[] {
  const found: number[] = [];
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(token)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
      if (state !== "Z" && state !== "X") found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("a sandboxed process's end", () => {
  const dirs: string[] = [];
  const ws = () => {
    const d = tempDir("statecraft-sandbox-end-");
    dirs.push(d);
    return d;
  };
  beforeAll(() => {
    expect(sandboxSupport().kind, "bubblewrap must be installed for these tests (apt-get install bubblewrap)").toBe("bwrap");
  });
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const sandbox = (workspace: string, option: Parameters<typeof resolveSandbox>[0] = "required") => ({ settings: resolveSandbox(option), workspace, warn() {} });

  it("bubblewrap is asked for its init's pid only when the caller opens a descriptor for it", () => {
    const layout = sandboxLayout({ workspace: ws() });
    expect(bwrapArgs({ layout, hostNetwork: false, infoFd: 3 }).join(" ")).toContain("--info-fd 3");
    expect(bwrapArgs({ layout, hostNetwork: false })).not.toContain("--info-fd");
  });

  it("the call returns only once nothing of the sandbox runs: setsid, nohup and double-forked processes included", { timeout: 60_000 }, async () => {
    const cwd = ws();
    const payloads = [
      "setsid sleep 31.4101 >/dev/null 2>&1 &",
      "nohup sleep 31.4102 >/dev/null 2>&1 &",
      "( ( sleep 31.4103 >/dev/null 2>&1 & ) & )",
      "setsid sh -c 'trap \"\" TERM HUP; exec sleep 31.4104' >/dev/null 2>&1 &",
    ];
    for (const [i, payload] of payloads.entries()) {
      const outcome = await runInProcessGroup(`${payload}\necho started`, { cwd, sandbox: sandbox(cwd) });
      expect(outcome.sandbox).toBe("bwrap");
      expect(outcome.stdout.trim()).toBe("started");
      expect(running(`31.410${i + 1}`), payload).toEqual([]);
    }
  });

  it("gives the command's exit status and a signal's, as an unsandboxed call does", { timeout: 60_000 }, async () => {
    const cwd = ws();
    expect((await runInProcessGroup("exit 7", { cwd, sandbox: sandbox(cwd) })).exitCode).toBe(7);
    expect((await runInProcessGroup("kill -TERM $$", { cwd, sandbox: sandbox(cwd) })).exitCode).toBe(143);
  });

  it("with an allow-list: the bridge is not the command's child (a wait for every child returns), and the status is the command's", { timeout: 60_000 }, async () => {
    const cwd = ws();
    const allow = sandbox(cwd, { mode: "required", network: { allow: ["registry.npmjs.org"] } });
    const waited = await runInProcessGroup("sleep 0.05 & wait; echo waited; echo $HTTPS_PROXY", { cwd, sandbox: allow, timeoutMs: 20_000 });
    expect(waited.timedOut).toBe(false);
    expect(waited.stdout.trim().split("\n")).toEqual(["waited", "http://127.0.0.1:3128"]);
    expect((await runInProcessGroup("exit 9", { cwd, sandbox: allow })).exitCode).toBe(9);
    // Something listens on the sandbox's 127.0.0.1:3128 before the command starts.
    const probe = await runInProcessGroup("exec 3<>/dev/tcp/127.0.0.1/3128 && echo connected", { cwd, sandbox: allow, timeoutMs: 20_000 });
    expect(probe.stdout.trim()).toBe("connected");
  });
});
