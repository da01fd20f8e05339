import { describe, expect, it } from "vitest";
import { analyzeShellCommand } from "../../src/permissions/shell-command.js";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { compileWildcard, escapeWildcard, hasWildcard, parseRule } from "../../src/permissions/rules.js";

// Shell commands are decided on their parse; the parser loads asynchronously, once.
await loadBashParser();

const texts = (command: string) => analyzeShellCommand(command).parts.map((part) => part.text);

describe("analyzeShellCommand", () => {
  it("splits at every control operator and unquoted newline", () => {
    expect(texts("a && b || c; d | e |& f & g")).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
    expect(texts("a\nb")).toEqual(["a", "b"]);
    expect(texts("(a && b)")).toEqual(["a", "b"]);
    expect(texts("{ a; b; }")).toEqual(["a", "b"]);
  });

  it("keeps quoted operators and newlines inside one word", () => {
    expect(texts('echo "a && b"')).toEqual(["echo a && b"]);
    expect(texts("git commit -m 'line 1\nline 2'")).toEqual(["git commit -m line 1\nline 2"]);
  });

  it("drops comments without swallowing the next line", () => {
    expect(texts("ls # comment; rm x\nrm y")).toEqual(["ls", "rm y"]);
    expect(texts("echo a#b")).toEqual(["echo a#b"]);
  });

  it("keeps redirections in the command and variables as written", () => {
    expect(texts("FOO=$BAR make 2>/dev/null > out.txt")).toEqual(["FOO=$BAR make 2>/dev/null > out.txt"]);
    // A leading redirection moves behind the words, so `rm` still leads.
    expect(texts(">o rm x")).toEqual(["rm x >o"]);
    const [part] = analyzeShellCommand("cat a 2>/dev/null > 'out file' 2>&1").parts;
    expect(part.redirects.map((r) => [r.operator, r.target?.text, r.writes])).toEqual([
      [">", "/dev/null", true],
      [">", "out file", true],
      [">&", undefined, false],
    ]);
    expect(part.args.map((w) => w.text)).toEqual(["cat", "a"]);
  });

  it("takes nested commands apart, keeping the substitution text in the outer command", () => {
    expect(texts("echo $(date) `whoami`")).toEqual(["echo $(date) `whoami`", "date", "whoami"]);
    expect(texts('echo "today: $(date +%F)"')).toEqual(["echo today: $(date +%F)", "date +%F"]);
    expect(texts("diff <(ls a) <(ls b)")).toEqual(["diff <(ls a) <(ls b)", "ls a", "ls b"]);
    expect(texts("bash -c 'a && b'")).toEqual(["bash -c a && b", "a", "b"]);
    expect(texts("eval 'a; b'")).toEqual(["eval a; b", "a", "b"]);
  });

  it("lists unwrapped aliases for deny rules", () => {
    const [part] = analyzeShellCommand("sudo -u root FOO=1 timeout 5 /usr/bin/rm -rf x").parts;
    expect(part.aliases).toEqual(["timeout 5 /usr/bin/rm -rf x", "/usr/bin/rm -rf x", "rm -rf x"]);
    // What a wrapper runs is a part of its own, which allow rules must allow too.
    expect(texts("nice -n 5 npm test")).toEqual(["nice -n 5 npm test", "npm test"]);
  });

  it("says whether the line is one simple command", () => {
    expect(analyzeShellCommand("  git status  ").simple).toBe(true);
    expect(analyzeShellCommand("git status").source).toBe("git status");
    expect(analyzeShellCommand("a && b").simple).toBe(false);
    expect(analyzeShellCommand("echo $(date)").simple).toBe(false);
  });

  it("treats a line bash can't parse as opaque, still listing the commands it could read", () => {
    const analysis = analyzeShellCommand("git status\nrm victim\n: ${");
    expect(analysis.simple).toBe(false);
    expect(analysis.opaque).toMatch(/can't parse/);
    expect(analysis.parts[0]).toMatchObject({ text: "git status\nrm victim\n: ${", opaque: expect.any(String) });
    expect(texts("git status\nrm victim\n: ${")).toContain("rm victim");
    expect(analyzeShellCommand("echo 'unterminated && rm -rf x").opaque).toBeDefined();
  });

  it("takes if/while/until/for bodies, negation, groups, subshells and functions apart", () => {
    expect(texts("if git status; then npm test; elif ls; then :; else make; fi")).toEqual(["git status", "npm test", "ls", ":", "make"]);
    expect(texts("while true; do ls; done; until false; do pwd; done")).toEqual(["true", "ls", "false", "pwd"]);
    expect(texts("for f in a $(ls); do echo $f; done")).toEqual(["ls", "echo $f"]);
    expect(texts("! rm x")).toEqual(["rm x"]);
    expect(texts("f() { rm x; }; f")).toEqual(["rm x", "f"]);
    expect(analyzeShellCommand("if a; then b; fi").simple).toBe(false);
  });

  it("marks what it does not understand as opaque", () => {
    for (const command of ["$(echo rm) x", "a=rm; $a x", "rm${IFS}x", "/bin/r? x", "{rm,x}", "(( x[$(id)] ))", "[[ -f x ]]", "coproc rm x", "alias ls=rm", "case x in x) rm y;; esac", "bash", "xargs -I{} sh -c {}", "eval \"$x\""]) {
      expect(analyzeShellCommand(command).opaque, command).toBeDefined();
    }
    for (const command of ["npm test", "git status && npm test", "ls -la | grep x", "echo hi > out.txt", "cat a 2>/dev/null", "export A=1", "bash -c 'ls'", "bash script.sh"]) {
      expect(analyzeShellCommand(command).opaque, command).toBeUndefined();
    }
  });

  it("notices commands that change directory", () => {
    expect(analyzeShellCommand("cd sub && make").changesDirectory).toBe(true);
    expect(analyzeShellCommand("bash -c 'pushd x'").changesDirectory).toBe(true);
    expect(analyzeShellCommand("make").changesDirectory).toBe(false);
  });
});

describe("rules", () => {
  it("parses Tool and Tool(pattern)", () => {
    expect(parseRule("bash")).toEqual({ text: "bash", tool: "bash" });
    expect(parseRule(" bash(git status*) ")).toEqual({ text: "bash(git status*)", tool: "bash", pattern: "git status*" });
    expect(parseRule("bash(echo (a))")).toEqual({ text: "bash(echo (a))", tool: "bash", pattern: "echo (a)" });
    expect(parseRule("write_file(*)")).toEqual({ text: "write_file(*)", tool: "write_file" });
  });

  it("compiles * wildcards, escapes round-trip", () => {
    expect(compileWildcard("git *").test("git")).toBe(true);
    expect(compileWildcard("a*b").test("a\nxb")).toBe(true);
    expect(hasWildcard("a\\*b")).toBe(false);
    const weird = "grep -E 'a|b\\*' *.ts \\";
    expect(compileWildcard(escapeWildcard(weird)).test(weird)).toBe(true);
    expect(compileWildcard(escapeWildcard(weird)).test(weird.replace("*.ts", "x.ts"))).toBe(false);
  });
});

describe("protected names", () => {
  it("the project config file is the one the CLI reads", async () => {
    const { CONFIG_FILE_NAME } = await import("../../src/cli/config.js");
    const { PROJECT_CONFIG_FILE } = await import("../../src/tools/protected-paths.js");
    expect(PROJECT_CONFIG_FILE).toBe(CONFIG_FILE_NAME);
  });
});
