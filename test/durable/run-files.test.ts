import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, fileRunStore, query, scriptedModel } from "../../src/index.js";
import { makeFileInside } from "../../src/record/agent-folder.js";
import { collect, removeDir, tempDir } from "../support/engine.js";

let cwd: string;
beforeEach(() => {
  cwd = tempDir();
});
afterEach(() => removeDir(cwd));

const runsOf = () => readdirSync(join(cwd, ".agent", "runs")).sort();

describe("the files a run start makes ahead", () => {
  it("the lock comes with a temp file for the first checkpoint, which becomes the checkpoint, and nothing is left", async () => {
    const store = fileRunStore(cwd);
    const release = await store.lock!("s1");
    const made = runsOf();
    expect(made).toContain("s1.lock");
    expect(made.filter((name) => name.startsWith(".s1.") && name.endsWith(".tmp"))).toHaveLength(1);
    await store.save({ ...(await stored()), sessionId: "s1" });
    // The temp file was renamed into place: no other temp file was made.
    expect(runsOf()).toEqual(["s1.json", "s1.lock"]);
    await store.delete("s1");
    await release();
    expect(runsOf()).toEqual([]);
  });

  it("a run given up before its first checkpoint leaves no temp file", async () => {
    const store = fileRunStore(cwd);
    const release = await store.lock!("s2");
    await release();
    expect(runsOf()).toEqual([]);
  });

  it("query: after the run the runs folder is empty and the transcript holds the run", async () => {
    const tool = defineTool({ name: "write_note", description: "Writes.", risk: "write", inputSchema: { type: "object" }, execute: () => "ok" });
    const { result } = await collect(
      query("go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }, { text: "done" }]), tools: [tool], cwd, permissions: { mode: "bypassPermissions" } }),
    );
    expect(result.status).toBe("completed");
    expect(runsOf()).toEqual([]);
    const transcript = readFileSync(join(cwd, ".agent", "sessions", `${result.sessionId}.jsonl`), "utf8");
    expect(transcript).toContain('"done"');
  });
});

/** A running run as the store keeps it, taken from a real run's checkpoint. */
async function stored() {
  let kept: Awaited<ReturnType<ReturnType<typeof fileRunStore>["load"]>>;
  const other = tempDir();
  try {
    const tool = defineTool({
      name: "write_note",
      description: "Writes.",
      risk: "write",
      inputSchema: { type: "object" },
      execute: async (_input: unknown, { sessionId }) => {
        kept = await fileRunStore(other).load(sessionId);
        return "ok";
      },
    });
    await collect(query("go", { model: scriptedModel([{ toolCalls: [{ name: "write_note", input: {} }] }, { text: "done" }]), tools: [tool], cwd: other, permissions: { mode: "bypassPermissions" } }));
  } finally {
    removeDir(other);
  }
  return kept!;
}

describe("makeFileInside", () => {
  it("makes the file empty, never truncates one that is there, and never writes through a link", async () => {
    const folder = join(cwd, ".agent");
    await makeFileInside(folder, join(folder, "sessions", "a.jsonl"));
    expect(readFileSync(join(folder, "sessions", "a.jsonl"), "utf8")).toBe("");
    writeFileSync(join(folder, "sessions", "b.jsonl"), "kept\n");
    await makeFileInside(folder, join(folder, "sessions", "b.jsonl"));
    expect(readFileSync(join(folder, "sessions", "b.jsonl"), "utf8")).toBe("kept\n");
    // A name planted as a link to a file elsewhere: the link is not followed, its target not made.
    const outside = join(cwd, "outside.txt");
    symlinkSync(outside, join(folder, "sessions", "c.jsonl"));
    await makeFileInside(folder, join(folder, "sessions", "c.jsonl"));
    expect(existsSync(outside)).toBe(false);
    // A folder on the way that is a link: nothing is made through it.
    mkdirSync(join(cwd, "elsewhere"));
    symlinkSync(join(cwd, "elsewhere"), join(folder, "linked"));
    await makeFileInside(folder, join(folder, "linked", "d.jsonl"));
    expect(readdirSync(join(cwd, "elsewhere"))).toEqual([]);
    // Outside the folder: not made.
    await makeFileInside(folder, join(cwd, "e.jsonl"));
    expect(existsSync(join(cwd, "e.jsonl"))).toBe(false);
  });
});
