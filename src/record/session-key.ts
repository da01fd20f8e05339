import { randomBytes, timingSafeEqual } from "../util/node-crypto.js";
import { linkSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hmacSha256Hex } from "../util/hmac-sha256.js";
import { makeDirectory } from "../util/make-dir.js";
import { statecraftHome } from "../util/statecraft-home.js";

/**
 * The key that signs every line of a session's transcript (its conversation, and the allow rules it keeps). It lives
 * in the statecraft folder, outside every workspace, so an agent that can write its own transcript still can't forge
 * a line: a line without a valid signature is ignored. One key per user, made on first use, readable by the user
 * alone (0600).
 */
export const SESSION_KEY_FILE = "session-key";

const KEY_HEX = /^[0-9a-f]{64}$/;
const SIGNATURE_PREFIX = "hmac-sha256:";

/** Where the key is: `<statecraft folder>/session-key` (`$STATECRAFT_HOME`, `$XDG_CONFIG_HOME/statecraft`, `~/.config/statecraft`). */
export function sessionKeyPath(): string {
  return join(statecraftHome(), SESSION_KEY_FILE);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function readKey(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw new Error(`cannot read the session key ${file}: ${(error as Error).message}`);
  }
  if (!KEY_HEX.test(text)) {
    throw new Error(`the session key ${file} is damaged (it must be 64 hex digits); delete it and a new one is made (rules kept by earlier sessions are then asked again)`);
  }
  return Buffer.from(text, "hex");
}

/**
 * The key, or undefined when none was made yet (nothing can have been signed). Throws when it can't be read. Read
 * each time, not cached: it is needed once per run that loads or adds a rule, and a replaced key counts at once.
 */
export function existingSessionKey(): Buffer | undefined {
  return readKey(sessionKeyPath());
}

/** The key, made (0600, in a 0700 folder) when there is none yet. Throws an error naming the file when it can't. */
export function sessionKey(): Buffer {
  const existing = existingSessionKey();
  if (existing) return existing;
  const file = sessionKeyPath();
  // Written whole to a file of this process's own, then linked into place: the key appears with its content or not
  // at all (a file opened with `wx` and then written is empty for a moment, and a process reading it then would call
  // it damaged), and `link` fails with EEXIST when another process made the key first: the loser reads the winner's.
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    makeDirectory(statecraftHome(), 0o700);
    writeFileSync(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    linkSync(temp, file);
  } catch (error) {
    if (errorCode(error) !== "EEXIST") {
      throw new Error(`cannot create the session key ${file}: ${(error as Error).message}; set STATECRAFT_HOME to a folder you can write`);
    }
  } finally {
    rmSync(temp, { force: true });
  }
  const key = readKey(file);
  if (!key) throw new Error(`cannot create the session key ${file}: it vanished as it was made`);
  return key;
}

function workspaceOf(cwd: string): string {
  try {
    return realpathSync.native(resolve(cwd));
  } catch {
    return resolve(cwd);
  }
}

/**
 * Signs and checks transcript lines. A line's signature covers the whole line as written (its JSON text without the
 * `sig` field, which is always last) and the signature of the line before it (`previous`, "" for a file's first
 * line), in this session of this workspace: a line edited, forged, copied from another session or folder, moved,
 * replayed, or following a line that was removed does not check. The signature is appended as text, so checking
 * needs no re-serialisation.
 */
export interface LineSigner {
  /** The line with its `sig`, chained to `previous` (the signature of the line before it, "" at the start). */
  sign(line: string, previous: string): string;
  /** Whether `line` is signed, chained to `previous`. */
  verify(line: string, previous: string): boolean;
  /** Whether `line` is signed the way versions before chaining signed lines: alone, order unchecked. */
  verifyUnchained(line: string): boolean;
  /** The `sig` a signed line carries (what the next line chains to), or undefined. */
  signatureOf(line: string): string | undefined;
}

const LINE_SIGNATURE = /,"sig":"hmac-sha256:([0-9a-f]{64})"\}$/;

export function lineSigner(key: Buffer, cwd: string, sessionId: string): LineSigner {
  const workspace = workspaceOf(cwd);
  const mac = hmacSha256Hex(key, `${JSON.stringify(["statecraft transcript line 2", workspace, sessionId])}\n`);
  const unchained = hmacSha256Hex(key, `${JSON.stringify(["statecraft transcript line 1", workspace, sessionId])}\n`);
  const check = (line: string, sign: (body: string) => string) => {
    const match = LINE_SIGNATURE.exec(line);
    if (!match) return false;
    const given = Buffer.from(match[1], "hex");
    const expected = Buffer.from(sign(`${line.slice(0, match.index)}}`), "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return {
    sign(line, previous) {
      if (!line.endsWith("}")) throw new Error("only a JSON object line can be signed");
      return `${line.slice(0, -1)},"sig":"${SIGNATURE_PREFIX}${mac(`${previous}\n${line}`)}"}`;
    },
    verify: (line, previous) => check(line, (body) => mac(`${previous}\n${body}`)),
    verifyUnchained: (line) => check(line, unchained),
    signatureOf: (line) => LINE_SIGNATURE.exec(line)?.[1],
  };
}
