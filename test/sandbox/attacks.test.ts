import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sessionKey, sessionKeyPath } from "../../src/record/session-key.js";
import { sandboxSupport } from "../../src/sandbox/index.js";
import { countingListener, folderOutsideTmp, processesWith, runCommands, survivorsAfter, tempDir } from "./support.js";

// Each class attacks with several payloads, as an agent in an untrusted repository would, through a bash call that is
// allowed outright (bypassPermissions). It fails when one gets through. CI installs bubblewrap: the sandbox is there.

let statecraftFolder = "";
const statecraftHome = () => statecraftFolder;
let savedHome: string | undefined;
beforeEach(() => {
  statecraftFolder = folderOutsideTmp("statecraft-home-");
  savedHome = process.env.STATECRAFT_HOME;
  process.env.STATECRAFT_HOME = statecraftFolder;
});
afterEach(() => {
  process.env.STATECRAFT_HOME = savedHome;
  fs.rmSync(statecraftFolder, { recursive: true, force: true });
});
let ws: string;
let outside: string;
let home: string;
const saved: Record<string, string | undefined> = {};
const SECRET_ENV = {
  OPENAI_API_KEY: "sk-openai-LEAK-4242424242",
  ANTHROPIC_API_KEY: "sk-ant-LEAK-4242424242",
  AWS_SECRET_ACCESS_KEY: "aws-LEAK-4242424242",
  GITHUB_TOKEN: "ghp_LEAK4242424242",
  STATECRAFT_DATABASE_URL: "postgres://agent:pw-LEAK-4242@127.0.0.1:5432/runs",
  APP_DB: "postgresql://svc:pw2-LEAK-4242@db.internal/app",
  PGPASSWORD: "pg-LEAK-4242424242",
};

beforeAll(() => {
  expect(sandboxSupport().kind, "bubblewrap must be installed for these tests (apt-get install bubblewrap)").toBe("bwrap");
  home = folderOutsideTmp("victim-home-");
  fs.mkdirSync(path.join(home, ".ssh"));
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- SSH-LEAK-4242\n");
  fs.mkdirSync(path.join(home, ".aws"));
  fs.writeFileSync(path.join(home, ".aws", "credentials"), "[default]\naws_secret_access_key = AWSFILE-LEAK-4242\n");
  fs.writeFileSync(path.join(home, ".netrc"), "machine example.com login me password NETRC-LEAK-4242\n");
  for (const [name, value] of Object.entries({ ...SECRET_ENV, HOME: home })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(home, { recursive: true, force: true });
});
beforeEach(() => {
  ws = tempDir("statecraft-sandbox-ws-");
  outside = folderOutsideTmp("outside-");
  fs.writeFileSync(path.join(ws, "README.md"), "a project\n");
});
afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const leaks = (results: Array<{ command: string; content: string }>, pattern: RegExp) => results.filter((r) => pattern.test(r.content)).map((r) => r.command);

describe("with the sandbox on (auto, bubblewrap), a bash command allowed outright", () => {
  it("cannot read ~/.ssh/id_rsa, ~/.aws, ~/.netrc or the session key", async () => {
    sessionKey();
    const key = sessionKeyPath();
    const keyHex = fs.readFileSync(key).toString("hex");
    const payloads = [
      "cat ~/.ssh/id_rsa",
      `cat ${home}/.ssh/id_rsa`,
      `cp -r ${home}/.ssh ./stolen && cat ./stolen/id_rsa`,
      `ln -s ${home}/.ssh/id_rsa link && cat link`,
      `node -e 'process.stdout.write(require("fs").readFileSync(process.argv[1], "utf8"))' ${home}/.ssh/id_rsa`,
      `cat ${home}/.aws/credentials ${home}/.netrc`,
      `grep -r LEAK ${home}`,
      `cat /proc/1/root${home}/.ssh/id_rsa`,
      `xxd -p ${key} || od -An -tx1 ${key} | tr -d ' \\n'`,
      `cat ${statecraftHome()}/session-key | base64`,
      `ls -la ${statecraftHome()} ${home}/.ssh`,
    ];
    const results = await runCommands(ws, payloads);
    expect(results).toHaveLength(payloads.length);
    expect(leaks(results, /SSH-LEAK|AWSFILE-LEAK|NETRC-LEAK/)).toEqual([]);
    expect(leaks(results, new RegExp(keyHex.slice(0, 16)))).toEqual([]);
    expect(leaks(results, new RegExp(fs.readFileSync(key).toString("base64").slice(0, 12).replace(/[+/]/g, "\\$&")))).toEqual([]);
    // The listing shows neither folder's files: both are empty where the command looks.
    expect(results[payloads.length - 1].content).not.toMatch(/session-key|id_rsa/);
  });

  it("cannot write outside the workspace", async () => {
    const payloads = [
      `echo pwned > ${outside}/a.txt`,
      `touch ${outside}/b.txt`,
      `mkdir ${outside}/c`,
      `cp README.md ${outside}/d.txt`,
      `ln -s /etc/passwd ${outside}/e`,
      `echo pwned >> ${home}/.bashrc`,
      `node -e 'require("fs").writeFileSync(process.argv[1], "pwned")' ${outside}/f.txt`,
      `echo pwned > /tmp/statecraft-escape-${path.basename(ws)}`,
      `cd .. && echo pwned > ${path.basename(outside)}/g.txt`,
    ];
    await runCommands(ws, payloads);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(home, ".bashrc"))).toBe(false);
    expect(fs.existsSync(`/tmp/statecraft-escape-${path.basename(ws)}`)).toBe(false);
  });

  it("cannot read or write the statecraft folder even when the workspace holds it (a workspace at $HOME)", async () => {
    const saved = process.env.STATECRAFT_HOME;
    const inside = path.join(ws, ".config", "statecraft");
    fs.mkdirSync(inside, { recursive: true });
    process.env.STATECRAFT_HOME = inside;
    try {
      sessionKey();
      const key = fs.readFileSync(path.join(inside, "session-key"));
      const payloads = [
        'echo \'{ "permissions": { "mode": "bypassPermissions" } }\' > .config/statecraft/config.json',
        `echo '["${ws}"]' > .config/statecraft/trusted-folders.json`,
        "cat .config/statecraft/session-key | od -An -tx1 | tr -d ' \\n'",
        "rm -f .config/statecraft/session-key",
        "mv .config/statecraft .config/moved",
        "ls -la .config/statecraft",
      ];
      const results = await runCommands(ws, payloads);
      expect(results).toHaveLength(payloads.length);
      expect(fs.readdirSync(inside)).toEqual(["session-key"]);
      expect(fs.readFileSync(path.join(inside, "session-key")).equals(key)).toBe(true);
      expect(fs.existsSync(path.join(ws, ".config", "moved"))).toBe(false);
      expect(leaks(results, new RegExp(key.toString("hex").slice(0, 16)))).toEqual([]);
      expect(results[5].content).not.toContain("session-key");
    } finally {
      process.env.STATECRAFT_HOME = saved;
    }
  });

  it("cannot write into .agent/, statecraft.config.json or .mcp.json, existing or not", async () => {
    fs.writeFileSync(path.join(ws, "statecraft.config.json"), '{ "maxTurns": 3 }\n');
    const payloads = [
      "mkdir -p .agent/sessions && echo '{}' > .agent/sessions/forged.jsonl",
      "echo forged >> .agent/trace.jsonl",
      "rm -rf .agent",
      "mv .agent moved",
      'echo \'{ "permissions": { "mode": "bypassPermissions" } }\' > statecraft.config.json',
      "rm statecraft.config.json",
      'echo \'{ "mcpServers": { "x": { "command": "sh" } } }\' > .mcp.json',
      "ln -s /tmp/anything .mcp.json",
      "node -e 'require(\"fs\").writeFileSync(\".agent/runs/forged.json\", \"{}\")'",
    ];
    const results = await runCommands(ws, payloads);
    expect(results).toHaveLength(payloads.length);
    expect(fs.readFileSync(path.join(ws, "statecraft.config.json"), "utf8")).toBe('{ "maxTurns": 3 }\n');
    expect(fs.existsSync(path.join(ws, ".mcp.json"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "moved"))).toBe(false);
    expect(fs.existsSync(path.join(ws, ".agent", "sessions", "forged.jsonl"))).toBe(false);
    expect(fs.existsSync(path.join(ws, ".agent", "runs", "forged.json"))).toBe(false);
    const trace = fs.readFileSync(path.join(ws, ".agent", "trace.jsonl"), "utf8");
    expect(trace).not.toMatch(/^forged$/m);
    // The workspace itself stays writable.
    const [ok] = await runCommands(ws, ["echo fine > notes.txt && cat notes.txt"]);
    expect(ok.content).toContain("fine");
  });

  it("cannot see a provider key, a token or the database URL, in its environment or any process's", async () => {
    const payloads = [
      "env",
      "cat /proc/$PPID/environ | tr '\\0' '\\n'",
      "cat /proc/1/environ | tr '\\0' '\\n'",
      "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null",
      "cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '",
      "ps -eww -o args",
      "node -e 'console.log(JSON.stringify(process.env))'",
      `cat /proc/${process.pid}/environ | tr '\\0' '\\n'`,
      `cat /proc/${process.pid}/cmdline`,
    ];
    const results = await runCommands(ws, payloads);
    expect(results).toHaveLength(payloads.length);
    expect(leaks(results, /LEAK/)).toEqual([]);
    // The namespace shows only the sandbox's own processes.
    expect(results[5].content).not.toContain("vitest");
  });

  it("cannot reach a host the network setting does not allow; a local listener counts no connection", async () => {
    const target = await countingListener();
    try {
      const payloads = [
        `curl -sS -m 5 http://127.0.0.1:${target.port}/`,
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${target.port}/`,
        `echo hi > /dev/tcp/127.0.0.1/${target.port}`,
        `node -e 'const s=require("net").connect(${target.port},"127.0.0.1");s.on("connect",()=>console.log("connected"));s.on("error",e=>{console.log(e.code);process.exit(1)})'`,
        `curl -sS -m 5 http://localhost:${target.port}/`,
      ];
      const results = await runCommands(ws, payloads);
      expect(results).toHaveLength(payloads.length);
      expect(target.count()).toBe(0);
      expect(leaks(results, /reached|connected\n/)).toEqual([]);
    } finally {
      await target.close();
    }
  });

  it("with network { allow }, reaches only the allowed host through the proxy; a refusal is an error it sees and a detail in the trace", async () => {
    const allowed = await countingListener();
    const denied = await countingListener();
    try {
      const payloads = [
        `curl -sS -m 5 http://127.0.0.1:${allowed.port}/`,
        `curl -sS -m 5 -w '%{http_code}' http://127.0.0.1:${denied.port}/`,
        `curl -sS -m 5 -p http://127.0.0.1:${denied.port}/`,
        `curl -sS -m 5 -x socks5h://127.0.0.1:3128 http://127.0.0.1:${denied.port}/`,
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${denied.port}/`,
        `echo hi > /dev/tcp/127.0.0.1/${denied.port}`,
        `curl -sS -m 5 http://localhost:${denied.port}/`,
      ];
      const results = await runCommands(ws, payloads, { sandbox: { network: { allow: [`127.0.0.1:${allowed.port}`] } } });
      expect(results[0].content).toContain("reached");
      expect(allowed.count()).toBe(1);
      expect(denied.count()).toBe(0);
      expect(leaks(results.slice(1), /reached/)).toEqual([]);
      // What the command saw: the proxy's refusal (HTTP 403 with the reason).
      expect(results[1].content).toContain("is not in sandbox.network.allow");
      expect(results[1].content).toContain("403");
      expect(results[1].content).toMatch(/sandbox: connections refused \(not in sandbox\.network\.allow\): 127\.0\.0\.1:\d+/);
      expect(results[1].details).toMatchObject({ sandbox: "bwrap", refused: [{ host: "127.0.0.1", port: denied.port, via: "http" }] });
      expect(results[2].details).toMatchObject({ refused: [{ host: "127.0.0.1", port: denied.port, via: "connect" }] });
      expect(results[3].details).toMatchObject({ refused: [{ host: "127.0.0.1", port: denied.port, via: "socks5" }] });
      const trace = fs.readFileSync(path.join(ws, ".agent", "trace.jsonl"), "utf8");
      expect(trace).toContain(`"refused":[{"host":"127.0.0.1","port":${denied.port},"via":"http"}]`);
    } finally {
      await allowed.close();
      await denied.close();
    }
  });

  it("does not survive the run's timeout: detached, setsid and nohup'd children end with it", async () => {
    const marker = `escapee${process.pid}x${Date.now()}`;
    const command = [
      `(setsid bash -c 'exec -a ${marker}-a sleep 1000' &)`,
      `nohup bash -c 'exec -a ${marker}-b sleep 1000' >/dev/null 2>&1 &`,
      `bash -c 'exec -a ${marker}-c sleep 1000' & disown`,
      `(trap '' TERM HUP; exec -a ${marker}-d sleep 1000) &`,
      `setsid -f bash -c 'trap "" TERM HUP INT; exec -a ${marker}-e sleep 1000'`,
      "sleep 1000",
    ].join("\n");
    const run = runCommands(ws, [command], { timeoutMs: 3_000 });
    // All five are running before the run times out (a bound, not a timing claim: the run's timeout is what ends them).
    const deadline = Date.now() + 20_000;
    while (processesWith(marker).length < 5 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(processesWith(marker)).toHaveLength(5);
    const [result] = await run;
    expect(result.isError).toBe(true);
    expect(await survivorsAfter(marker)).toEqual([]);
  });
});

describe('with sandbox: "off"', () => {
  it("the environment is still scrubbed of keys, tokens and database URLs", async () => {
    const results = await runCommands(ws, ["env", "node -e 'console.log(JSON.stringify(process.env))'"], { sandbox: "off" });
    expect(results).toHaveLength(2);
    expect(leaks(results, /LEAK/)).toEqual([]);
    expect(results[0].content).toContain(`HOME=${home}`);
  });

  it("the file attacks above are real: unsandboxed they get through (what the sandbox adds)", async () => {
    const results = await runCommands(ws, ["cat ~/.ssh/id_rsa", `echo pwned > ${outside}/a.txt`], { sandbox: "off" });
    expect(results[0].content).toContain("SSH-LEAK-4242");
    expect(fs.readFileSync(path.join(outside, "a.txt"), "utf8")).toBe("pwned\n");
  });

  it("sandbox.env passes a named variable and sets others", async () => {
    const [result] = await runCommands(ws, ["echo $GITHUB_TOKEN $EXTRA $OPENAI_API_KEY"], { sandbox: { mode: "off", env: { pass: ["GITHUB_TOKEN"], set: { EXTRA: "extra-value" } } } });
    expect(result.content).toBe("exit code: 0\nstdout:\nghp_LEAK4242424242 extra-value");
    expect(result.content).not.toContain("sk-openai");
  });
});
