import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolMessage } from "../../src/models/messages.js";
import { scriptedModel } from "../../src/models/scripted.js";
import { query } from "../../src/query.js";
import { MAX_IMAGE_BYTES, readFileTool } from "../../src/tools/builtin/read-file.js";
import { collect } from "../support/engine.js";
import { makeTempDir, removeDir } from "./workspace.js";

let ws: string;
beforeEach(() => {
  ws = makeTempDir();
});
afterEach(() => removeDir(ws));

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1");
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x1a, 0, 0, 0]), Buffer.from("WEBPVP8 "), Buffer.alloc(8)]);

async function readThroughQuery(file: string) {
  const model = scriptedModel([{ toolCalls: [{ name: "read_file", input: { path: file } }] }, { text: "seen" }]);
  await collect(query("look", { model, cwd: ws, tools: [readFileTool()], traceFile: false, store: "memory" }));
  return model.requests[1].messages.find((m): m is ToolMessage => m.role === "tool")!;
}

describe("read_file of an image", () => {
  for (const [name, bytes, type] of [["a.png", PNG, "image/png"], ["b.jpg", JPEG, "image/jpeg"], ["c.gif", GIF, "image/gif"], ["d.webp", WEBP, "image/webp"]] as const) {
    it(`${name}: an image part the model is sent (type read from the bytes), with a line of text`, async () => {
      fs.writeFileSync(path.join(ws, name), bytes);
      const result = await readThroughQuery(name);
      expect(result.isError).toBe(false);
      expect(result.content).toMatch(new RegExp(`^${name.replace(".", "\\.")} \\(${type}, `));
      expect(result.parts).toEqual([{ type: "text", text: result.content }, { type: "image", image: bytes.toString("base64"), mediaType: type }]);
    });
  }

  it("an image over the size limit is refused with the limit; other binary files still are", async () => {
    fs.writeFileSync(path.join(ws, "huge.png"), Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES)]));
    fs.writeFileSync(path.join(ws, "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 0]));
    const huge = await readThroughQuery("huge.png");
    expect(huge.isError).toBe(true);
    expect(huge.content).toMatch(/huge\.png is an image of .*read_file returns images up to 5/);
    expect(huge.parts).toBeUndefined();
    const blob = await readThroughQuery("blob.bin");
    expect(blob.content).toMatch(/blob\.bin is a binary file/);
  });
});
