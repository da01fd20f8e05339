import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type pg from "pg";
import { AgentError } from "../errors/agent-error.js";
import { secretSealer, type SecretSealer } from "../record/sealed-secrets.js";
import { sessionKey, sessionKeyPath } from "../record/session-key.js";
import { QUEUE_KEY_ROW, queueKeyPair, queueSealer } from "./queue-seal.js";

/** The environment variable a worker reads its run key from when `createWorker` is given none. */
export const RUN_KEY_ENV = "STATECRAFT_RUN_KEY";

/** The shortest run key taken: 32 characters (`openssl rand -hex 32` gives 64). */
const MIN_KEY_LENGTH = 32;
const SIGNATURE_PREFIX = "hmac-sha256:";

/**
 * The key that signs what a worker writes to the database and trusts again later (a suspended run, a session's
 * conversation). The database is not out of an agent's reach: anyone holding its URL can write it. What a worker
 * holds and the agent's tools never see is this key (it is kept out of their environment, src/dbos/tool-env.ts).
 */
export interface RunKey {
  /** Where it came from, for messages: `createWorker({ runKey })`, `$STATECRAFT_RUN_KEY` or the session key file. */
  readonly source: string;
  /** A fingerprint stored in the database, so workers with different keys are told at start, not at resume. */
  readonly id: string;
  sign(scope: readonly unknown[], text: string): string;
  verify(scope: readonly unknown[], text: string, sig: unknown): boolean;
  /** Seals the secrets of text kept in the database (a stored run, a step's output) for `scope`; unseals them. */
  sealer(scope: readonly unknown[]): SecretSealer;
  /** The public key enqueuers seal a queued run's secrets to (statecraft.meta's `run_queue_key`, base64url). */
  readonly queueKey: string;
  /** Seals and opens what was queued for `scope` (queue-seal.ts). */
  queueSealer(scope: readonly unknown[]): SecretSealer;
}

/**
 * The worker's run key: `given` (createWorker's `runKey`), else `$STATECRAFT_RUN_KEY`, else the user's session key
 * file (one machine works out of the box; workers on several machines must share a key, and the database's
 * fingerprint check says so at start).
 */
export function resolveRunKey(given: string | Uint8Array | undefined, env: NodeJS.ProcessEnv = process.env, where = "createWorker"): RunKey {
  const fail = (message: string) => new AgentError("INVALID_OPTIONS", `${where}: ${message}`);
  let secret: Buffer;
  let source: string;
  if (given !== undefined) {
    if (typeof given !== "string" && !(given instanceof Uint8Array)) throw fail("runKey must be a string or bytes (at least 32 characters, e.g. `openssl rand -hex 32`)");
    secret = Buffer.from(given);
    source = "createWorker({ runKey })";
  } else if (env[RUN_KEY_ENV] !== undefined && env[RUN_KEY_ENV] !== "") {
    secret = Buffer.from(env[RUN_KEY_ENV]!);
    source = `$${RUN_KEY_ENV}`;
  } else {
    try {
      secret = sessionKey();
    } catch (error) {
      throw fail(`no run key: ${(error as Error).message} (or give runKey / set ${RUN_KEY_ENV})`);
    }
    source = `the session key ${sessionKeyPath()}`;
  }
  if (secret.length < MIN_KEY_LENGTH) throw fail(`the run key from ${source} has ${secret.length} characters; give at least ${MIN_KEY_LENGTH} (e.g. \`openssl rand -hex 32\`)`);
  // Its own key, not the session key itself: the same bytes may also sign transcript lines.
  const key = createHmac("sha256", secret).update("statecraft/dbos run key 1").digest();
  const id = createHash("sha256").update(key).update("fingerprint").digest("hex").slice(0, 16);
  const queue = queueKeyPair(createHmac("sha256", key).update("statecraft/dbos queue key 1").digest());
  const mac = (scope: readonly unknown[], text: string) => createHmac("sha256", key).update(JSON.stringify(scope)).update("\n").update(text).digest();
  return {
    source,
    id,
    sign: (scope, text) => SIGNATURE_PREFIX + mac(scope, text).toString("hex"),
    sealer: (scope) => secretSealer(key, ["statecraft/dbos", ...scope]),
    queueKey: queue.publicKey,
    queueSealer: (scope) => queueSealer(queue.publicKey, scope, queue.privateKey),
    verify(scope, text, sig) {
      if (typeof sig !== "string" || !sig.startsWith(SIGNATURE_PREFIX)) return false;
      const given = Buffer.from(sig.slice(SIGNATURE_PREFIX.length), "hex");
      const expected = mac(scope, text);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/**
 * Records the key's fingerprint in the database (the first worker's), and refuses a worker whose key differs: its
 * runs would be signed with a key the others can't check, and every run it suspended would be RUN_DAMAGED elsewhere.
 */
export async function checkRunKey(pool: pg.Pool, key: RunKey, where: string): Promise<void> {
  await pool.query("INSERT INTO statecraft.meta (key, value) VALUES ('run_key_id', $1) ON CONFLICT (key) DO NOTHING", [key.id]);
  const found = (await pool.query<{ value: string }>("SELECT value FROM statecraft.meta WHERE key = 'run_key_id'")).rows[0]?.value;
  if (found === key.id) {
    // The public key enqueuers seal to: a row someone replaced would have them seal to a key that is not the workers'.
    await pool.query("INSERT INTO statecraft.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [QUEUE_KEY_ROW, key.queueKey]);
    const published = (await pool.query<{ value: string }>("SELECT value FROM statecraft.meta WHERE key = $1", [QUEUE_KEY_ROW])).rows[0]?.value;
    if (published === key.queueKey) return;
    throw new AgentError(
      "RUN_KEY_MISMATCH",
      `statecraft.meta's ${QUEUE_KEY_ROW} of ${where} is not the public key of the workers' run key (it was changed outside statecraft): runs queued since were sealed to another key. Delete the row (DELETE FROM statecraft.meta WHERE key = '${QUEUE_KEY_ROW}') and start a worker to write it again, and keep the database's URL away from what agents run`,
    );
  }
  throw new AgentError(
      "RUN_KEY_MISMATCH",
      `the workers of ${where} sign runs with another key (fingerprint ${found}; this worker's, from ${key.source}, is ${key.id}): give every worker of a database the same key (createWorker({ runKey }) or $${RUN_KEY_ENV}, e.g. \`openssl rand -hex 32\`). To start over with this key, delete the row 'run_key_id' of statecraft.meta (runs suspended under the old key can then not be resumed)`,
  );
}
