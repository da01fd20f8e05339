import { createHmac } from "node:crypto";
import fs from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { sessionKey } from "../../src/record/session-key.js";
import { loadTranscript, transcriptPath } from "../../src/record/transcript.js";
import { collect } from "../support/engine.js";
import { useTempHome } from "../support/home.js";
import { makeTempDir, removeDir } from "../tools/workspace.js";

// Hole 9: transcript lines were signed one by one, so genuine lines could be reordered, dropped or replayed. Each
// line's signature now covers the one before it: a line out of its place is ignored, with a warning.

let ws: string;
useTempHome("statecraft-chain-home-");
beforeEach(() => {
  ws = makeTempDir("statecraft-chain-");
});
afterEach(() => removeDir(ws));

const file = () => transcriptPath(ws, "s");
const lines = () => fs.readFileSync(file(), "utf8").split("\n").filter((l) => l !== "");
const write = (list: string[]) => fs.writeFileSync(file(), `${list.join("\n")}\n`);
const contents = () => loadTranscript(ws, "s").messages.map((m) => m.content);

async function turn(prompt: string, answer: string) {
  await collect(query(prompt, { model: scriptedModel([{ text: answer }]), cwd: ws, sessionId: "s", traceFile: false }));
}

/** A session of three runs: six genuine lines, in order. */
async function session(): Promise<string[]> {
  await turn("first", "one");
  await turn("second", "two");
  await turn("third", "three");
  expect(contents()).toEqual(["first", "one", "second", "two", "third", "three"]);
  expect(loadTranscript(ws, "s").ignored).toEqual([]);
  return lines();
}

/** Whether `got` is the genuine conversation, or it cut short: never a line moved, repeated or from after a gap. */
const isGenuinePrefix = (got: unknown[], genuine: unknown[]) => got.length <= genuine.length && got.every((c, i) => c === genuine[i]);

describe("a transcript's lines are chained", () => {
  it("reordered, dropped-from-the-middle and replayed genuine lines are found (several payloads)", async () => {
    const genuine = await session();
    const said = ["first", "one", "second", "two", "third", "three"];
    const attacks: Array<{ name: string; edit: (l: string[]) => string[] }> = [
      { name: "two lines swapped", edit: (l) => [l[0], l[1], l[3], l[2], l[4], l[5]] },
      { name: "the last line moved first", edit: (l) => [l[5], ...l.slice(0, 5)] },
      { name: "a line dropped from the middle", edit: (l) => [l[0], l[1], l[3], l[4], l[5]] },
      { name: "the first line dropped", edit: (l) => l.slice(1) },
      { name: "a line replayed at the end", edit: (l) => [...l, l[2]] },
      { name: "a line replayed right after itself", edit: (l) => [l[0], l[0], ...l.slice(1)] },
      { name: "a whole run replayed", edit: (l) => [...l, l[2], l[3]] },
      { name: "the file reversed", edit: (l) => [...l].reverse() },
    ];
    const through: string[] = [];
    for (const attack of attacks) {
      write(attack.edit(genuine));
      const loaded = loadTranscript(ws, "s");
      const got = loaded.messages.map((m) => m.content);
      if (!isGenuinePrefix(got, said) || loaded.ignored.length === 0) through.push(`${attack.name}: ${JSON.stringify(got)}`);
      expect(loaded.ignored.join("\n"), attack.name).toMatch(/does not follow the line before it/);
    }
    expect(through).toEqual([]);
  });

  it("a line forged at the end is ignored, and the session's next run chains on from its last genuine line", async () => {
    await turn("first", "one");
    fs.appendFileSync(file(), `${JSON.stringify({ type: "message", time: "t", message: { role: "user", content: "forged" }, sig: `hmac-sha256:${"0".repeat(64)}` })}\n`);
    await turn("second", "two");
    const loaded = loadTranscript(ws, "s");
    expect(loaded.messages.map((m) => m.content)).toEqual(["first", "one", "second", "two"]);
    expect(loaded.ignored).toHaveLength(1);
    expect(loaded.ignored[0]).toContain("(line 3)");
  });

  it("old files, signed line by line by an older version, are read with a warning and continued chained", async () => {
    const key = sessionKey();
    const scope = JSON.stringify(["statecraft transcript line 1", fs.realpathSync.native(ws), "s"]);
    const oldLine = (content: string, role = "user") => {
      const line = JSON.stringify({ type: "message", time: "t", message: { role, content } });
      return `${line.slice(0, -1)},"sig":"hmac-sha256:${createHmac("sha256", key).update(scope).update("\n").update(line).digest("hex")}"}`;
    };
    fs.mkdirSync(transcriptPath(ws, "s").replace(/\/[^/]+$/, ""), { recursive: true });
    write([oldLine("old question"), oldLine("old answer", "assistant")]);
    const warnings: string[] = [];
    expect(loadTranscript(ws, "s", (w) => warnings.push(w)).messages.map((m) => m.content)).toEqual(["old question", "old answer"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/first 2 lines were signed one by one by an older statecraft: read as before, but their order can't be checked/);
    await turn("new question", "new answer");
    expect(contents()).toEqual(["old question", "old answer", "new question", "new answer"]);
    // An old-style line after the chained ones is not taken: only a leading run of them is.
    fs.appendFileSync(file(), `${oldLine("injected after")}\n`);
    const loaded = loadTranscript(ws, "s");
    expect(loaded.messages.map((m) => m.content)).toEqual(["old question", "old answer", "new question", "new answer"]);
    expect(loaded.ignored).toHaveLength(1);
  });
});
