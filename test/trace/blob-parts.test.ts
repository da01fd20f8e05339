import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ContentPart } from "../../src/models/content.js";
import type { Message } from "../../src/models/messages.js";
import { messageFromBlobs, messageToBlobs, partsFromBlobs, partsToBlobs } from "../../src/record/blob-parts.js";
import { MemoryBlobs } from "../../src/record/blobs.js";

const PDF = Buffer.from("%PDF-1.4 a small file");
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("parts as records keep them", () => {
  it("base64 goes to the store, URLs and text stay; reading back gives the very same parts (same JSON)", () => {
    const memory = new MemoryBlobs();
    const blobs = memory.of("s1");
    const parts: ContentPart[] = [
      { type: "text", text: "look" },
      { type: "image", image: "https://example.com/cat.jpg" },
      { type: "file", data: PDF.toString("base64"), mediaType: "application/pdf", filename: "a.pdf" },
    ];
    const stored = partsToBlobs(parts, blobs);
    expect(stored).toEqual([parts[0], parts[1], { type: "file", blob: `sha256:${sha(PDF)}`, mediaType: "application/pdf", filename: "a.pdf", bytes: PDF.length }]);
    expect(JSON.stringify(partsFromBlobs(stored, blobs))).toBe(JSON.stringify(parts));
    const message: Message = { role: "tool", toolCallId: "call_1", name: "read", content: "look", parts, isError: false };
    expect(JSON.stringify(messageFromBlobs(messageToBlobs(message, blobs), blobs))).toBe(JSON.stringify(message));
  });

  it("text that is not exactly base64 of its bytes (unpadded) stays inline, so it reads back unchanged", () => {
    const parts: ContentPart[] = [{ type: "image", image: "iVBORw0KGgo", mediaType: "image/png" }];
    expect(partsToBlobs(parts, new MemoryBlobs().of("s"))).toEqual(parts);
  });

  it("a message without binary data is the same object; a reference no store can read is a clear error", () => {
    const blobs = new MemoryBlobs().of("s");
    const message: Message = { role: "user", content: [{ type: "text", text: "hi" }] };
    expect(messageToBlobs(message, blobs)).toBe(message);
    expect(() => partsFromBlobs([{ type: "image", blob: `sha256:${"0".repeat(64)}`, mediaType: "image/png", bytes: 1 }], blobs)).toThrow(
      expect.objectContaining({ code: "BLOB_NOT_FOUND" }),
    );
    expect(() => partsFromBlobs([{ type: "image", blob: "sha256:../../etc/passwd", bytes: 1 }], blobs, "line 3")).toThrow(/line 3: "sha256:\.\.\/\.\.\/etc\/passwd" is not a blob reference/);
    expect(() => partsFromBlobs([{ type: "image", blob: `sha256:${"a".repeat(64)}`, bytes: 1 }], undefined, "line 4")).toThrow(/line 4 names the blob .* no blob store was given/);
  });

  it("memory blobs go when the last session naming them is forgotten", () => {
    const memory = new MemoryBlobs();
    const hash = sha(PDF);
    memory.of("a").put(hash, PDF);
    memory.of("b").put(hash, PDF);
    memory.release("a");
    expect(memory.get(hash).equals(PDF)).toBe(true);
    memory.release("b");
    expect(memory.has(hash)).toBe(false);
    expect(() => memory.get(hash)).toThrow(expect.objectContaining({ code: "BLOB_NOT_FOUND" }));
  });
});
