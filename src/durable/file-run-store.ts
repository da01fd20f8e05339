import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import { agentFolder, realFoldersDown } from "../record/agent-folder.js";
import { existingSessionKey, sessionKey } from "../record/session-key.js";
import { checkSessionId } from "../record/transcript.js";
import { runRecordProblem, signRun, verifyRun, type RunStore, type StoredRun } from "./run-store.js";

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Where a workspace's durable runs are kept: `.agent/runs/`. */
export function runsFolder(cwd: string): string {
  return join(agentFolder(cwd), "runs");
}

/**
 * The default run store: one signed JSON file per session, `.agent/runs/<sessionId>.json`. A save writes a new file
 * and renames it over the old one (a torn write leaves the old file whole); files and folders are opened through no
 * link (`.agent/` comes with the workspace). `lock` makes `<sessionId>.lock` holding the owner's pid; a lock whose pid
 * is dead is taken over.
 */
export function fileRunStore(cwd: string): RunStore {
  const root = agentFolder(cwd);
  const folder = runsFolder(cwd);
  const fileOf = (sessionId: string) => {
    checkSessionId(sessionId);
    return join(folder, `${sessionId}.json`);
  };

  const read = (file: string): StoredRun | undefined => {
    realFoldersDown(root, folder);
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (code(error) === "ENOENT") return undefined;
      if (code(error) === "ELOOP") throw damaged(file, "it is a symbolic link");
      throw error;
    }
    let text: string;
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw damaged(file, "it is not a regular file");
      if (stat.nlink > 1) throw damaged(file, `it is hard-linked (${stat.nlink} names)`);
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw damaged(file, `it is not JSON (${(error as Error).message})`);
    }
    const { sig, ...run } = (parsed ?? {}) as Record<string, unknown>;
    const problem = runRecordProblem(run);
    if (problem) throw damaged(file, problem);
    const key = existingSessionKey();
    if (!key || !verifyRun(key, run as unknown as StoredRun, sig)) {
      throw damaged(file, "its signature does not match (it was changed outside statecraft, or signed with another session key)");
    }
    return run as unknown as StoredRun;
  };

  return {
    async save(run) {
      const file = fileOf(run.sessionId);
      realFoldersDown(root, folder);
      const text = JSON.stringify({ ...run, sig: signRun(sessionKey(), run) });
      // A fresh name, made exclusively and without following a link, then renamed over the old file: rename replaces
      // the name itself (a link planted there is replaced, never followed).
      const temp = join(folder, `.${run.sessionId}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
      const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      try {
        renameSync(temp, file);
      } catch (error) {
        try {
          unlinkSync(temp);
        } catch {
          // already gone
        }
        throw error;
      }
    },
    async load(sessionId) {
      return read(fileOf(sessionId));
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
      try {
        unlinkSync(fileOf(sessionId));
      } catch (error) {
        if (code(error) !== "ENOENT") throw error;
      }
    },
    async lock(sessionId) {
      checkSessionId(sessionId);
      realFoldersDown(root, folder);
      const file = join(folder, `${sessionId}.lock`);
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
          writeSync(fd, `${process.pid}\n`);
          closeSync(fd);
          return async () => {
            try {
              if (ownerOf(file) === process.pid) unlinkSync(file);
            } catch {
              // taken over or removed already
            }
          };
        } catch (error) {
          if (code(error) !== "EEXIST") throw error;
        }
        const owner = ownerOf(file);
        if (owner !== undefined && owner !== process.pid && alive(owner)) {
          throw new AgentError("RUN_BUSY", `the run of session ${sessionId} is going on in process ${owner} (running, or being resumed); wait for it to end, or stop that process`);
        }
        if (owner === process.pid) throw new AgentError("RUN_BUSY", `the run of session ${sessionId} is already going on in this process (running, or being resumed); wait for it to end`);
        // A dead owner's lock (or a lock without a pid, torn as it was made): taken over.
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
