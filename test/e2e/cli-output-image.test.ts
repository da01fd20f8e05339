import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runCli } from "../cli/helpers/cli-process.js";

const temps: string[] = [];
function workspace(): string {
  const dir = makeTempDir("statecraft-output-image-");
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) removeDir(dir);
});

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
const SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
const lines = (dir: string) =>
  readFileSync(join(dir, ".agent", "trace.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { state?: string; details?: Record<string, unknown> });

describe("statecraft run --output-schema and --image", { timeout: 60_000 }, () => {
  it("--output-schema: a mismatch is asked again; the validated value is printed, and in turn_end with --json", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "schema.json"), JSON.stringify(SCHEMA));
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "seven" }, { text: '{"n":7}' }]));
    const human = await runCli(["run", "--model", "script:case.json", "--output-schema", "schema.json", "a number"], { cwd: dir });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('{\n  "n": 7\n}');
    expect(lines(dir).filter((l) => l.state === "validate_output").map((l) => l.details!.valid)).toEqual([false, true]);
    const json = await runCli(["run", "--json", "--model", "script:case.json", "--output-schema", "schema.json", "a number"], { cwd: dir });
    const events = json.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; output?: unknown });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", reason: "final_answer", output: { n: 7 } });
  });

  it("--output-schema: never matching exits 8 (model_error) with OUTPUT_INVALID; a bad file is a usage error", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "schema.json"), JSON.stringify(SCHEMA));
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "a" }, { text: "b" }, { text: "c" }]));
    const result = await runCli(["run", "--model", "script:case.json", "--output-schema", "schema.json", "a number"], { cwd: dir });
    expect(result.code).toBe(8);
    expect(result.stdout).toContain("error: the final answer did not match the output schema after 3 attempts");
    expect(lines(dir).at(-1)!.details).toMatchObject({ reason: "model_error", error: { code: "OUTPUT_INVALID" } });
    writeFileSync(join(dir, "bad.json"), "[1,2]");
    const bad = await runCli(["run", "--model", "script:case.json", "--output-schema", "bad.json", "x"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--output-schema bad.json: the file must hold a JSON Schema object");
  });

  it("--image attaches the file to the prompt as an image part; a file that is not an image is a usage error", async () => {
    const dir = workspace();
    writeFileSync(join(dir, "dot.png"), PNG);
    writeFileSync(join(dir, "notes.txt"), "not an image");
    writeFileSync(join(dir, "case.json"), JSON.stringify([{ text: "a dot" }]));
    const result = await runCli(["run", "--model", "script:case.json", "--image", "dot.png", "what is this?"], { cwd: dir });
    expect(result.code).toBe(0);
    const input = lines(dir)[0].details!.input as unknown[];
    expect(input).toEqual([{ type: "text", text: "what is this?" }, expect.objectContaining({ type: "image", mediaType: "image/png" })]);
    const bad = await runCli(["run", "--model", "script:case.json", "--image", "notes.txt", "x"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--image notes.txt: not a PNG, JPEG, GIF or WebP image");
  });
});
