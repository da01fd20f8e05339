import { describe, expect, it } from "vitest";
import { analyzeShellCommand } from "../../src/permissions/shell-command.js";
import { compileWildcard, escapeWildcard, hasWildcard, parseRule } from "../../src/permissions/rules.js";

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
    expect(texts("FOO=$BAR make 2>/dev/null > out.txt")).toEqual(["FOO=$BAR make 2 > /dev/null > out.txt"]);
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
    expect(part.aliases).toEqual(["/usr/bin/rm -rf x", "rm -rf x"]);
  });

  it("says whether the line is one simple command", () => {
    expect(analyzeShellCommand("  git status  ").simple).toBe(true);
    expect(analyzeShellCommand("git status").source).toBe("git status");
    expect(analyzeShellCommand("a && b").simple).toBe(false);
    expect(analyzeShellCommand("echo $(date)").simple).toBe(false);
  });

  it("treats an unparseable line as one opaque part", () => {
    const analysis = analyzeShellCommand("echo 'unterminated && rm -rf x");
    expect(analysis.simple).toBe(false);
    expect(analysis.parts.length).toBeGreaterThan(0);
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
