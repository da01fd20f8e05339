import { randomBytes } from "../util/node-crypto.js";
import { close, closeSync, constants, fstatSync, fsyncSync, open, openSync, readdirSync, readFileSync, realpathSync, unlink, unlinkSync, write, writeSync, type Stats } from "node:fs";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import { AgentError } from "../errors/agent-error.js";
import { agentFolder, realFoldersDown } from "../record/agent-folder.js";
import { existingSessionKey, sessionKey } from "../record/session-key.js";
import { SealError, secretSealer, type SecretSealer } from "../record/sealed-secrets.js";
import { checkSessionId } from "../record/transcript.js";
import { baseLine, deltaLine, readJournal } from "./run-journal.js";
import { renameIntoPlace } from "../util/rename-into-place.js";
import { bindingProblem, type RunStore, type SaveHint, type StoredRun } from "./run-store.js";
import { fileBlobStore } from "../record/blobs.js";
import { runFromBlobs, runToBlobs } from "./run-blobs.js";

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
// Making a file (its inode) is the dearest thing a run start does to the disk, up to a millisecond or more on a busy
// one: done on libuv's threads, so that a thousand runs starting at once do not each hold up the event loop for it.
const openAsync = promisify(open);
const writeAsync = promisify(write);
const closeAsync = promisify(close);
const unlinkAsync = promisify(unlink);
const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Where a workspace's durable runs are kept: `.agent/runs/`. */
export function runsFolder(cwd: string): string {
  return join(agentFolder(cwd), "runs");
}

/**
 * The default run store: one signed file per session, `.agent/runs/<sessionId>.json`, in JSON Lines (run-journal.ts).
 * A suspended run is one line, written to a new file renamed over the old one and fsynced (a torn write leaves the
 * old file whole). A run going on appends one line per checkpoint with what changed since the last one, so a
 * checkpoint costs what changed, not the conversation; a rebuilt conversation (compaction) starts a new file. Files
 * and folders are opened through no link (`.agent/` comes with the workspace). `lock` makes `<sessionId>.lock` holding
 * the owner's pid; a lock whose pid is dead is taken over.
 */
export function fileRunStore(cwd: string): RunStore {
  const root = agentFolder(cwd);
  // Secrets in a stored run are written sealed (record/sealed-secrets.ts): `.agent/` is readable by the agent's tools
  // and by anyone with the folder, and the run must resume exactly as it was.
  // Made once per session and key: a run checkpoints every few steps, and each sealer reads the environment's secrets.
  const sealers = new Map<string, { key: Buffer; sealer: SecretSealer }>();
  const sealerOf = (key: Buffer, sessionId: string): SecretSealer => {
    const known = sealers.get(sessionId);
    if (known && known.key.equals(key)) return known.sealer;
    const sealer = secretSealer(key, ["statecraft stored run", workspaceOf(cwd), sessionId]);
    sealers.set(sessionId, { key, sealer });
    return sealer;
  };
  const folder = runsFolder(cwd);
  // Images and files of a run are kept once each in `.agent/blobs/`, the run's lines naming them by hash.
  const blobs = fileBlobStore(cwd);
  const fileOf = (sessionId: string) => {
    checkSessionId(sessionId);
    return join(folder, `${sessionId}.json`);
  };

  const refusedOpen = (file: string, error: unknown): undefined => {
    if (code(error) === "ENOENT") return undefined;
    if (code(error) === "ELOOP") throw damaged(file, "it is a symbolic link");
    throw error;
  };
  const read = (file: string): StoredRun | undefined => {
    realFoldersDown(root, folder);
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      return refusedOpen(file, error);
    }
    return readOpened(file, fd);
  };
  const readOpened = (file: string, fd: number): StoredRun => {
    let text: string;
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw damaged(file, "it is not a regular file");
      if (stat.nlink > 1) throw damaged(file, `it is hard-linked (${stat.nlink} names)`);
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const key = existingSessionKey();
    if (key) {
      try {
        text = sealerOf(key, basename(file, ".json")).unseal(text);
      } catch (error) {
        if (error instanceof SealError) throw damaged(file, error.message);
        throw error;
      }
    }
    const journal = readJournal(text, key);
    if ("problem" in journal) throw damaged(file, journal.problem);
    const unbound = bindingProblem(journal.run, { sessionId: basename(file, ".json"), workspace: cwd });
    if (unbound) throw damaged(file, unbound);
    try {
      return runFromBlobs(journal.run, blobs, file);
    } catch (error) {
      if (error instanceof AgentError) throw new AgentError(error.code, `the stored run ${file} can't be resumed: ${error.message}`);
      throw error;
    }
  };

  /** Per session, what this store last wrote to its file: where appended checkpoint lines go on from. */
  const written = new Map<string, { key: Buffer; runId: string; dev: number; ino: number; messages: number; sig: string; batch: string; fd?: number }>();

  /**
   * Per session locked by this store: a temp file made (exclusively, on libuv's threads) as the lock was taken, for
   * the run's first checkpoint, which is written at once and must not wait for the disk to make a file.
   */
  const spare = new Map<string, { temp: string; fd: number }>();
  const tempOf = (sessionId: string) => join(folder, `.${sessionId}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const dropSpare = async (sessionId: string) => {
    const made = spare.get(sessionId);
    if (!made) return;
    spare.delete(sessionId);
    await closeAsync(made.fd).catch(() => undefined);
    await unlinkAsync(made.temp).catch(() => undefined);
  };
  /** Deletions of checkpoints going on, per session: the lock is given back only after its run's file is gone. */
  const deleting = new Map<string, Promise<void>>();

  /** Writes the run as the file's one line: a new file, renamed into place. */
  const writeBase = (run: StoredRun, sync: boolean) => {
    const file = fileOf(run.sessionId);
    realFoldersDown(root, folder);
    const key = sessionKey();
    const { line: plain, sig, batch } = baseLine(key, run);
    const line = sealerOf(key, run.sessionId).seal(plain);
    // A fresh name, made exclusively and without following a link, then renamed over the old file: rename replaces
    // the name itself (a link planted there is replaced, never followed). The lock made one already, most times.
    const made = spare.get(run.sessionId);
    spare.delete(run.sessionId);
    const temp = made?.temp ?? tempOf(run.sessionId);
    const fd = made?.fd ?? openSync(temp, EXCLUSIVE, 0o600);
    let stat: Stats;
    try {
      writeSync(fd, line);
      if (sync) fsyncSync(fd);
      stat = fstatSync(fd);
    } finally {
      closeSync(fd);
    }
    renameIntoPlace(temp, file);
    forget(run.sessionId);
    written.set(run.sessionId, { key, runId: run.runId, dev: stat.dev, ino: stat.ino, messages: run.messages.length, sig, batch });
  };

  /** Appends a checkpoint line to the file this store wrote; false when that file is no longer there as written. */
  const append = (run: StoredRun, from: number): boolean => {
    const last = written.get(run.sessionId)!;
    if (last.fd === undefined) {
      let fd: number;
      try {
        fd = openSync(fileOf(run.sessionId), constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
      } catch {
        return false;
      }
      // Only the file this store made: one put in its place (a link, a copy) gets a new file instead. The descriptor
      // is kept for the run's later lines: a name swapped afterwards can't redirect them.
      const stat = fstatSync(fd);
      if (!stat.isFile() || stat.nlink !== 1 || stat.dev !== last.dev || stat.ino !== last.ino) {
        closeSync(fd);
        return false;
      }
      last.fd = fd;
    }
    const { line, sig, batch } = deltaLine(last.key, last.sig, run, from, last.batch);
    writeSync(last.fd, sealerOf(last.key, run.sessionId).seal(line));
    last.messages = run.messages.length;
    last.sig = sig;
    last.batch = batch;
    return true;
  };
  /** Forgets what this store wrote of the session's run (its file is replaced, removed, or the run let go). */
  const forget = (sessionId: string) => {
    const last = written.get(sessionId);
    written.delete(sessionId);
    sealers.delete(sessionId);
    if (last?.fd !== undefined) closeSync(last.fd);
  };

  return {
    async save(given, hint?: SaveHint) {
      fileOf(given.sessionId);
      const run = runToBlobs(given, blobs);
      const last = written.get(run.sessionId);
      // A run going on appends what changed since this store's last line of it, when its conversation only grew.
      if (run.status === "running" && last && last.runId === run.runId && (hint?.unchangedMessages ?? 0) >= last.messages && run.messages.length >= last.messages) {
        if (append(run, last.messages)) return;
      }
      // A suspension is kept through a power loss too: the process is about to exit.
      writeBase(run, run.status === "suspended");
      if (run.status === "suspended") forget(run.sessionId);
    },
    async load(sessionId) {
      // Every run start asks (is a suspended run in the way?), and most find nothing: asked off the event loop.
      const file = fileOf(sessionId);
      realFoldersDown(root, folder);
      let fd: number;
      try {
        fd = await openAsync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch (error) {
        return refusedOpen(file, error);
      }
      return readOpened(file, fd);
    },
    async list() {
      let names: string[];
      try {
        realFoldersDown(root, folder);
        names = readdirSync(folder);
      } catch (error) {
        if (code(error) === "ENOENT") return [];
        throw error;
      }
      const runs: StoredRun[] = [];
      for (const name of names.sort()) {
        if (!name.endsWith(".json") || name.startsWith(".")) continue;
        const run = read(join(folder, name));
        if (run) runs.push(run);
      }
      return runs;
    },
    async delete(sessionId) {
      const file = fileOf(sessionId);
      forget(sessionId);
      const done = unlinkAsync(file).catch((error: unknown) => {
        if (code(error) !== "ENOENT") throw error;
      });
      const settled = done.catch(() => undefined);
      deleting.set(sessionId, settled);
      void settled.then(() => {
        if (deleting.get(sessionId) === settled) deleting.delete(sessionId);
      });
      return done;
    },
    async lock(sessionId) {
      checkSessionId(sessionId);
      realFoldersDown(root, folder);
      const file = join(folder, `${sessionId}.lock`);
      for (let attempt = 0; attempt < 3; attempt++) {
        let fd: number;
        try {
          fd = await openAsync(file, EXCLUSIVE, 0o600);
        } catch (error) {
          if (code(error) !== "EEXIST") throw error;
          fd = -1;
        }
        if (fd >= 0) {
          try {
            await writeAsync(fd, `${process.pid}\n`);
          } finally {
            await closeAsync(fd);
          }
          // The temp file of the run's first checkpoint, made now while nothing waits on it (a failure here only
          // means the checkpoint makes its own).
          if (!spare.has(sessionId)) {
            const temp = tempOf(sessionId);
            await openAsync(temp, EXCLUSIVE, 0o600).then(
              (made) => void spare.set(sessionId, { temp, fd: made }),
              () => undefined,
            );
          }
          return async () => {
            forget(sessionId);
            await dropSpare(sessionId);
            await deleting.get(sessionId);
            try {
              if (ownerOf(file) === process.pid) await unlinkAsync(file);
            } catch {
              // taken over or removed already
            }
          };
        }
        const owner = ownerOf(file);
        if (owner !== undefined && owner !== process.pid && alive(owner)) {
          throw new AgentError("RUN_BUSY", `the run of session ${sessionId} is going on in process ${owner} (running, or being resumed); wait for it to end, or stop that process`);
        }
        if (owner === process.pid) throw new AgentError("RUN_BUSY", `the run of session ${sessionId} is already going on in this process (running, or being resumed); wait for it to end`);
        // A dead owner's lock (or a lock without a pid, torn as it was made): taken over, with the temp file that
        // process made for a first checkpoint it never wrote.
        if (owner !== undefined) removeTemps(folder, sessionId, owner);
        try {
          unlinkSync(file);
        } catch (error) {
          if (code(error) !== "ENOENT") throw error;
        }
      }
      throw new AgentError("RUN_BUSY", `could not take the lock ${file}: other processes keep taking it`);
    },
  };
}

function workspaceOf(cwd: string): string {
  try {
    return realpathSync.native(resolve(cwd));
  } catch {
    return resolve(cwd);
  }
}

function damaged(file: string, why: string): AgentError {
  return new AgentError("RUN_DAMAGED", `the stored run ${file} can't be resumed: ${why}. Delete it to give the run up (its trace and transcript stay)`);
}

function ownerOf(file: string): number | undefined {
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const pid = Number.parseInt(readFileSync(fd, "utf8").trim(), 10);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** What follows `.<sessionId>.<pid>.` in a temp file's name (tempOf). */
const TEMP_END = /^[0-9a-f]{12}\.tmp$/;

/** Removes the temp files `pid` made for this session's checkpoints (named by tempOf). */
function removeTemps(folder: string, sessionId: string, pid: number): void {
  const prefix = `.${sessionId}.${pid}.`;
  for (const entry of readdirSync(folder)) {
    if (!entry.startsWith(prefix) || !TEMP_END.test(entry.slice(prefix.length))) continue;
    try {
      unlinkSync(join(folder, entry));
    } catch {
      // gone already
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return code(error) === "EPERM";
  }
}

/** The live process that holds the lock of this session's run in `cwd`, if one does (a run going on or resumed). */
export function runOwner(cwd: string, sessionId: string): number | undefined {
  checkSessionId(sessionId);
  const owner = ownerOf(join(runsFolder(cwd), `${sessionId}.lock`));
  return owner !== undefined && alive(owner) ? owner : undefined;
}
