import { describe, expect, it } from "vitest";
import { queueSealer } from "../../src/dbos/queue-seal.js";
import { resolveRunKey } from "../../src/dbos/run-key.js";
import { sealJson, unsealJson } from "../../src/record/sealed-secrets.js";

// A queued run's secrets are sealed by whoever enqueues it, holding only the workers' public key; only a worker (its
// run key) opens them, for that run only.

const KEY = "k".repeat(40);
const OTHER = "o".repeat(40);
const PROMPT = "deploy with OPENAI_API_KEY=sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789 and push to https://ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123@github.com/x";

describe("queue sealing (public key)", () => {
  const worker = resolveRunKey(KEY, {});
  const enqueuer = queueSealer(worker.queueKey, ["s1", "r1"]);

  it("an enqueuer seals with the public key alone; the text keeps no secret; a worker opens it exactly", () => {
    const sealed = enqueuer.seal(PROMPT);
    expect(sealed).toContain("[SEALED:");
    expect(sealed).not.toContain("sk-proj-");
    expect(sealed).not.toContain("ghp_");
    expect(() => enqueuer.unseal(sealed)).toThrow(/only a worker/);
    expect(worker.queueSealer(["s1", "r1"]).unseal(sealed)).toBe(PROMPT);
    const options = { systemPrompt: `DB_PASSWORD='s3cr3t-db-password-77' ${PROMPT}`, maxTurns: 3, permissions: { allow: ["bash(echo *)"] } };
    const sealedOptions = sealJson(enqueuer, options);
    expect(JSON.stringify(sealedOptions)).not.toMatch(/s3cr3t-db-password-77|sk-proj-|ghp_/);
    expect(unsealJson(worker.queueSealer(["s1", "r1"]), sealedOptions)).toEqual(options);
  });

  it("is bound to its run and to the workers' key: another run, another key or an edited token does not open", () => {
    const sealed = enqueuer.seal(PROMPT);
    expect(() => worker.queueSealer(["s1", "r2"]).unseal(sealed)).toThrow(/not sealed with this key for this run/);
    expect(() => resolveRunKey(OTHER, {}).queueSealer(["s1", "r1"]).unseal(sealed)).toThrow(/not sealed with this key for this run/);
    const edited = sealed.replace(/\[SEALED:([0-9a-f]{70})([0-9a-f])/, (_m, head: string, c: string) => `[SEALED:${head}${c === "0" ? "1" : "0"}`);
    expect(edited).not.toBe(sealed);
    expect(() => worker.queueSealer(["s1", "r1"]).unseal(edited)).toThrow(/not sealed with this key|not one a worker/);
    expect(() => worker.queueSealer(["s1", "r1"]).unseal(sealed.replace(/\[SEALED:[0-9a-f]{20}/, "[SEALED:"))).toThrow();
  });

  it("the same run key gives the same public key on every worker; another key another", () => {
    expect(resolveRunKey(KEY, {}).queueKey).toBe(worker.queueKey);
    expect(resolveRunKey(OTHER, {}).queueKey).not.toBe(worker.queueKey);
    expect(() => queueSealer("not-a-key", ["s", "r"])).toThrow(/run_queue_key is not an X25519 public key/);
  });
});
