import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha256Hex } from "../../src/util/hmac-sha256.js";

describe("hmacSha256Hex", () => {
  it("gives createHmac's digest of prefix + text for keys of any length and texts of any size, call after call", () => {
    // Texts shorter and longer than the first buffer, non-ASCII (2-, 3- and 4-byte UTF-8), a lone surrogate, empty.
    const texts = ["{}", "x".repeat(5000), "héllo ✓ 日本 😀", "a\uD800b", "", `{"b":2}`, "😀".repeat(700)];
    for (const key of [randomBytes(32), randomBytes(64), randomBytes(100), Buffer.alloc(0)]) {
      for (const prefix of ["", "scope\n", "sig:ü\n"]) {
        const mac = hmacSha256Hex(key, prefix);
        for (const text of texts) expect(mac(text)).toBe(createHmac("sha256", key).update(prefix).update(text).digest("hex"));
      }
    }
  });
});
