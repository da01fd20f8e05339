import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { demoDecision } from "../../src/demo/policy.js";
import { DEMO_TEST_COMMAND, demoSampleDir, demoScenarioFile, prepareDemoWorkspace } from "../../src/demo/workspace.js";

/** The sample's test command, with node:test's TAP report asked for: Node 20 prints it by default, Node 24 a spec list. */
const sampleTestArgs = () => ["--test-reporter=tap", ...DEMO_TEST_COMMAND.split(" ").slice(1)];

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("demo sample project", () => {
  it("is copied into a new folder under the given temporary root, and its test fails before the fix", () => {
    const root = mkdtempSync(join(tmpdir(), "statecraft-demo-root-"));
    temps.push(root);
    const dir = prepareDemoWorkspace(root);
    expect(dir.startsWith(root)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(["README.md", "package.json", "src", "test"]);
    const run = spawnSync(process.execPath, sampleTestArgs(), { cwd: dir, encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("# fail 1");
    // A second demo gets a folder of its own.
    expect(prepareDemoWorkspace(root)).not.toBe(dir);
  });

  it("the scenario's edit turns the failing test green", () => {
    const root = mkdtempSync(join(tmpdir(), "statecraft-demo-root-"));
    temps.push(root);
    const dir = prepareDemoWorkspace(root);
    const steps = JSON.parse(readFileSync(demoScenarioFile(), "utf8")) as Array<{ toolCalls?: Array<{ name: string; input: Record<string, string> }> }>;
    const edit = steps.flatMap((s) => s.toolCalls ?? []).find((c) => c.name === "edit_file");
    expect(edit).toBeDefined();
    const file = join(dir, edit!.input.path);
    const source = readFileSync(file, "utf8");
    expect(source.split(edit!.input.old_string)).toHaveLength(2); // present exactly once
    writeFileSync(file, source.replace(edit!.input.old_string, edit!.input.new_string));
    const run = spawnSync(process.execPath, sampleTestArgs(), { cwd: dir, encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("# pass 4");
  });

  it("the scenario uses list_dir, read_file, grep, one mistaken call, edit_file and bash, then answers", () => {
    const steps = JSON.parse(readFileSync(demoScenarioFile(), "utf8")) as Array<{ text?: string; toolCalls?: Array<{ name: string; input: unknown }> }>;
    const names = steps.flatMap((s) => (s.toolCalls ?? []).map((c) => c.name));
    expect(names).toEqual(["list_dir", "read_file", "grep", "read_file", "read_file", "edit_file", "bash"]);
    const mistaken = steps[2].toolCalls![0];
    expect(mistaken.input).not.toHaveProperty("path");
    const last = steps[steps.length - 1];
    expect(last.toolCalls).toBeUndefined();
    expect(last.text).toMatch(/tests.*pass/);
    expect(steps.find((s) => s.toolCalls?.some((c) => c.name === "bash"))!.toolCalls![0].input).toEqual({ command: DEMO_TEST_COMMAND });
    expect(existsSync(demoSampleDir())).toBe(true);
  });
});

describe("demo policy", () => {
  const ask = (name: string, input: unknown) => demoDecision({ call: { id: "c", name, input }, reason: "r" });
  it("allows file edits and exactly the sample's test command, denies anything else, and says why", () => {
    expect(ask("edit_file", { path: "src/slugify.js" })).toEqual({ answer: "allow", why: expect.stringContaining("demo's copy") });
    expect(ask("bash", { command: DEMO_TEST_COMMAND }).answer).toBe("allow");
    expect(ask("bash", { command: `${DEMO_TEST_COMMAND}; rm -rf ~` })).toEqual({ answer: "deny", why: expect.stringContaining("only") });
    expect(ask("deploy", {}).answer).toBe("deny");
  });
});
