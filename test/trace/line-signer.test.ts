import { createHmac, randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { lineSigner } from "../../src/record/session-key.js";
import { removeDir, tempDir } from "../support/engine.js";

describe("lineSigner", () => {
  it("signs with HMAC-SHA256 of the scope, the line before's signature and the line, as createHmac computes it, for lines of any length", () => {
    const cwd = tempDir();
    try {
      const key = randomBytes(32);
      const signer = lineSigner(key, cwd, "s-1");
      const other = lineSigner(key, cwd, "s-2");
      // The scope names the workspace by its real path and the session.
      const scope = JSON.stringify(["statecraft transcript line 2", realpathSync.native(cwd), "s-1"]);
      let previous = "";
      // Short lines, one longer than the signer's first buffer, non-ASCII text, then a short one again.
      const lines = ["{}", `{"a":1}`, JSON.stringify({ text: "x".repeat(5000) }), JSON.stringify({ text: "héllo ✓ 日本" }), `{"b":2}`];
      for (const line of lines) {
        const signed = signer.sign(line, previous);
        const sig = /"sig":"hmac-sha256:([0-9a-f]{64})"\}$/.exec(signed)?.[1];
        expect(sig).toBe(createHmac("sha256", key).update(scope).update("\n").update(previous).update("\n").update(line).digest("hex"));
        expect(signer.verify(signed, previous)).toBe(true);
        expect(signer.verify(signed, "")).toBe(previous === "");
        expect(other.verify(signed, previous)).toBe(false);
        expect(signer.verifyUnchained(signed)).toBe(false);
        expect(signer.verify(signed.replace(line.slice(0, -1), `${line.slice(0, -1)} `), previous)).toBe(false);
        previous = signer.signatureOf(signed)!;
      }
    } finally {
      removeDir(cwd);
    }
  });

  it("checks lines an older version signed one by one (scope line 1, no chain) with verifyUnchained", () => {
    const cwd = tempDir();
    try {
      const key = randomBytes(32);
      const scope = JSON.stringify(["statecraft transcript line 1", realpathSync.native(cwd), "s-1"]);
      const line = `{"a":1}`;
      const old = `{"a":1,"sig":"hmac-sha256:${createHmac("sha256", key).update(scope).update("\n").update(line).digest("hex")}"}`;
      expect(lineSigner(key, cwd, "s-1").verifyUnchained(old)).toBe(true);
      expect(lineSigner(key, cwd, "s-1").verify(old, "")).toBe(false);
      expect(lineSigner(key, cwd, "s-2").verifyUnchained(old)).toBe(false);
    } finally {
      removeDir(cwd);
    }
  });
});
