import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync } from "node:fs";
import { renameIntoPlace } from "../util/rename-into-place.js";
import { join } from "node:path";
import { AgentError } from "../errors/agent-error.js";
import { createHash, randomBytes } from "../util/node-crypto.js";
import { agentFolder, realFoldersDown } from "./agent-folder.js";

/**
 * Binary content (images, files) kept once, by the SHA-256 of its bytes: what the trace, the transcript and stored
 * runs write in place of base64 data is a reference to it (blob-parts.ts). A store only keeps and gives back bytes;
 * every read is checked against the hash it is named by, so bytes changed after they were written are refused, never
 * sent to a model.
 */
export interface BlobStore {
  /** Keeps `bytes` under `hash` (their SHA-256, hex), unless it holds them already. */
  put(hash: string, bytes: Buffer): void;
  /** The bytes kept under `hash`, checked against it; `BLOB_NOT_FOUND` or `BLOB_DAMAGED` when it can't give them. */
  get(hash: string): Buffer;
  /** Whether `put` of this hash would do nothing (known kept): spares decoding the bytes again. */
  has?(hash: string): boolean;
}

/** The SHA-256 of bytes, hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const HASH = /^[0-9a-f]{64}$/;

/** Whether text is a blob's name: 64 lowercase hex digits. */
export function isBlobHash(hash: string): boolean {
  return HASH.test(hash);
}

/** Where a workspace's blobs are kept: `.agent/blobs/`, one file per blob named by its hash. */
export function blobsFolder(cwd: string): string {
  return join(agentFolder(cwd), "blobs");
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Per blobs folder, the hashes this process knows are there (written or read and checked): each is written once. */
const knownHere = new Map<string, Set<string>>();

/**
 * The blobs of a workspace, in `.agent/blobs/<sha256>`. A blob is written once: to a fresh temp file (made
 * exclusively, through no link), then renamed into place, so a reader never sees half of one; a blob already there
 * with the right bytes is not written again. `.agent/` comes with the workspace, so folders are reached through no
 * link and a file is opened without following one.
 */
export function fileBlobStore(cwd: string): BlobStore {
  const root = agentFolder(cwd);
  const folder = blobsFolder(cwd);
  const known = knownHere.get(folder) ?? new Set<string>();
  knownHere.set(folder, known);
  const fileOf = (hash: string) => {
    if (!isBlobHash(hash)) throw new AgentError("BLOB_NOT_FOUND", `${JSON.stringify(hash)} is not a blob's name (sha256: and 64 hex digits)`);
    return join(folder, hash);
  };
  /** The file's bytes when it is a regular file holding them; undefined when it is missing; throws when it is not them. */
  const read = (hash: string): Buffer | undefined => {
    const file = fileOf(hash);
    realFoldersDown(root, folder);
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (code(error) === "ENOENT") return undefined;
      if (code(error) === "ELOOP") throw damaged(file, hash, "it is a symbolic link");
      throw error;
    }
    let bytes: Buffer;
    try {
      if (!fstatSync(fd).isFile()) throw damaged(file, hash, "it is not a regular file");
      bytes = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
    if (sha256Hex(bytes) !== hash) throw damaged(file, hash, `its ${bytes.length} bytes have another hash (it was changed or cut short after it was written)`);
    return bytes;
  };
  return {
    has: (hash) => known.has(hash),
    put(hash, bytes) {
      if (known.has(hash)) return;
      const file = fileOf(hash);
      let there = false;
      try {
        there = read(hash) !== undefined;
      } catch (error) {
        // A damaged file (or a link) in the blob's place is replaced by the right bytes.
        if (!(error instanceof AgentError)) throw error;
      }
      if (!there) {
        const temp = join(folder, `.${hash.slice(0, 16)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
        const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
        try {
          writeSync(fd, bytes);
        } finally {
          closeSync(fd);
        }
        renameIntoPlace(temp, file);
      }
      known.add(hash);
    },
    get(hash) {
      let bytes: Buffer | undefined;
      try {
        bytes = read(hash);
      } catch (error) {
        // Damaged since it was written: the next write of these bytes puts them back.
        known.delete(hash);
        throw error;
      }
      if (bytes === undefined) {
        known.delete(hash);
        throw new AgentError("BLOB_NOT_FOUND", `${fileOf(hash)} is missing: the recorded image or file sha256:${hash} is not in ${folder}; copy the .agent/blobs/ folder with the trace, transcript or stored run that names it`);
      }
      known.add(hash);
      return bytes;
    },
  };
}

function damaged(file: string, hash: string, why: string): AgentError {
  return new AgentError("BLOB_DAMAGED", `${file} can't be used as the recorded image or file sha256:${hash}: ${why}. Restore it, or delete it and the records that name it`);
}

/**
 * Blobs kept in this process's memory (`store: "memory"`), each by the sessions whose lines name it: a blob goes
 * when the last of them is forgotten, so a server answering every request with a memory run does not keep every
 * image it was sent.
 */
export class MemoryBlobs {
  private readonly blobs = new Map<string, { bytes: Buffer; owners: Set<string> }>();
  private readonly owned = new Map<string, Set<string>>();

  /** The store a session's lines write to and read from. */
  of(owner: string): BlobStore {
    return {
      put: (hash, bytes) => {
        const kept = this.blobs.get(hash) ?? { bytes, owners: new Set<string>() };
        this.blobs.set(hash, kept);
        kept.owners.add(owner);
        const hashes = this.owned.get(owner) ?? new Set<string>();
        this.owned.set(owner, hashes);
        hashes.add(hash);
      },
      get: (hash) => this.get(hash),
      has: (hash) => this.owned.get(owner)?.has(hash) === true,
    };
  }

  get(hash: string): Buffer {
    const kept = this.blobs.get(hash);
    if (!kept) throw new AgentError("BLOB_NOT_FOUND", `the image or file sha256:${hash} is not kept in this process's memory (store: "memory" keeps a blob while a session that names it is kept)`);
    return kept.bytes;
  }

  has(hash: string): boolean {
    return this.blobs.has(hash);
  }

  /** The session is forgotten: blobs no other session names go too. */
  release(owner: string): void {
    for (const hash of this.owned.get(owner) ?? []) {
      const kept = this.blobs.get(hash);
      kept?.owners.delete(owner);
      if (kept && kept.owners.size === 0) this.blobs.delete(hash);
    }
    this.owned.delete(owner);
  }
}

/**
 * Blobs read from several places (a trace's own folder, the workspace, memory): the first that has the blob gives
 * it. A damaged copy is reported unless another place has it whole; a blob no place has is `BLOB_NOT_FOUND` naming
 * every place. Writing is not its job: `put` is refused.
 */
export function blobSources(sources: ReadonlyArray<{ store: BlobStore; where: string }>): BlobStore {
  return {
    put() {
      throw new Error("blobSources only reads blobs");
    },
    get(hash) {
      let damage: AgentError | undefined;
      for (const { store } of sources) {
        try {
          return store.get(hash);
        } catch (error) {
          if (!(error instanceof AgentError)) throw error;
          if (error.code === "BLOB_DAMAGED") damage ??= error;
        }
      }
      throw damage ?? new AgentError("BLOB_NOT_FOUND", `the recorded image or file sha256:${hash} is in none of ${sources.map((s) => s.where).join(", ") || "(no place given)"}; copy the .agent/blobs/ folder the record was written with`);
    },
  };
}

/**
 * A store whose write failures are told to `onError` (once): a record's writer never throws into the run, and a part
 * whose blob could not be written keeps its data inline.
 */
export function reportingBlobs(store: BlobStore, onError: (error: Error) => void): BlobStore {
  let reported = false;
  return {
    put(hash, bytes) {
      try {
        store.put(hash, bytes);
      } catch (error) {
        if (!reported) {
          reported = true;
          onError(new Error(`could not write the blob sha256:${hash}: ${(error as Error).message}; images and files are written into the lines instead`));
        }
        throw error;
      }
    },
    get: (hash) => store.get(hash),
    ...(store.has ? { has: (hash: string) => store.has!(hash) } : {}),
  };
}

/** Keeps nothing: for lines that are compared, not kept (a replay's), whose references only need the hash. */
export const hashOnlyBlobs: BlobStore = {
  has: () => true,
  put() {},
  get(hash) {
    throw new AgentError("BLOB_NOT_FOUND", `sha256:${hash} was never kept (hash-only blob store)`);
  },
};
