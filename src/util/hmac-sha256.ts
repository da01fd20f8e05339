import { createHash, createHmac, nodeCrypto } from "./node-crypto.js";

const BLOCK = 64;

/**
 * HMAC-SHA256 under `key` of `prefix` followed by a text, in hex: the same as
 * `createHmac("sha256", key).update(prefix).update(text).digest("hex")`. Written out (RFC 2104) with one-shot hashes
 * into buffers kept between calls, for text signed line by line: an Hmac object per line cost more than the rest of
 * writing it. The hashes give hex, not a Buffer: a Buffer per hash (an ArrayBuffer the collector tracks) cost about
 * as much as the hashing.
 */
export function hmacSha256Hex(key: Buffer, prefix = ""): (text: string) => string {
  // One-shot hashing (Node 20.12 and later): far cheaper per call than an Hmac object.
  const hashOnce = (nodeCrypto() as { hash?: (algorithm: string, data: Uint8Array, encoding: "hex") => string }).hash;
  if (typeof hashOnce !== "function") return (text) => createHmac("sha256", key).update(prefix).update(text).digest("hex");
  const hash = hashOnce;
  const block = Buffer.alloc(BLOCK);
  (key.length > BLOCK ? createHash("sha256").update(key).digest() : key).copy(block);
  const pad = (byte: number) => Buffer.from(block.map((b) => b ^ byte));
  const innerHead = Buffer.concat([pad(0x36), Buffer.from(prefix)]);
  const outer = Buffer.alloc(BLOCK + 32);
  pad(0x5c).copy(outer);
  let inner = Buffer.alloc(innerHead.length + 1024);
  innerHead.copy(inner);
  return (text) => {
    // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4): room for that, without
    // measuring the text first.
    const most = innerHead.length + text.length * 3;
    if (most > inner.length) {
      inner = Buffer.alloc(most * 2);
      innerHead.copy(inner);
    }
    const length = innerHead.length + inner.write(text, innerHead.length);
    outer.write(hash("sha256", inner.subarray(0, length), "hex"), BLOCK, "hex");
    return hash("sha256", outer, "hex");
  };
}
