import { closeSync, openSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { makeDirectory } from "../util/make-dir.js";
import { openAppendInside } from "./agent-folder.js";

const FLUSH_CHARS = 64 * 1024;
// Small enough that buffered lines die young: at 256 a writer with one or two lines a step (audit, transcript) held
// each line past a scavenge or two, about 0.5 KB promoted a step (bench/notes.md, "Promoted bytes").
const FLUSH_LINES = 64;

/**
 * One file appended to by every writer of this process that names it: one descriptor, one buffer, one write per
 * batch. A thousand concurrent runs sharing a trace file used to mean a thousand descriptors and a write per run per
 * quiescent point; lines still land whole, in the order they were written.
 */
class AppendTarget {
  private fd: number | undefined;
  private buffer: string[] = [];
  private bufferedChars = 0;
  private scheduled = false;
  private failure: Error | undefined;
  readonly writers = new Set<JsonlWriter>();

  /** A folder the file must really be inside (see `openAppendInside`); set by the first writer that asks. */
  inside: string | undefined;

  constructor(readonly path: string) {}

  get failed(): boolean {
    return this.failure !== undefined;
  }

  append(line: string): void {
    this.buffer.push(line);
    this.bufferedChars += line.length + 1;
    // A run of instant steps never lets the event loop turn: flush by size too, so a long run's lines reach the
    // file as it goes (a killed process loses at most this much) and the buffer stays small.
    if (this.bufferedChars >= FLUSH_CHARS || this.buffer.length >= FLUSH_LINES) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  flush(): void {
    if (this.buffer.length === 0 || this.failure) return;
    const chunk = this.buffer.join("\n") + "\n";
    this.buffer = [];
    this.bufferedChars = 0;
    try {
      if (this.fd === undefined) {
        // Not mkdirSync's recursive mode: it spins forever on some paths it can't create (/proc/1/nope).
        if (this.inside !== undefined) {
          this.fd = openAppendInside(this.inside, this.path);
        } else {
          makeDirectory(dirname(this.path));
          this.fd = openSync(this.path, "a");
        }
      }
      writeSync(this.fd, chunk);
    } catch (error) {
      this.failure = new Error(`could not write ${this.path}: ${(error as Error).message}; later lines of this run are not recorded`);
      for (const writer of this.writers) writer.failed(this.failure);
    }
  }

  /** Flushes and closes the file; later writers of the path open it again. */
  close(): void {
    this.flush();
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed by the OS at exit; nothing is lost since every line was written whole
      }
      this.fd = undefined;
    }
  }
}

/** Files with writers, flushed synchronously if the process exits (a crash never loses written lines). */
const targets = new Map<string, AppendTarget>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const target of targets.values()) target.close();
  });
}

/**
 * Appends JSON lines to a file. Lines are buffered and written whole, in one write per batch: at the next
 * quiescent point (setImmediate), once 64 lines or 64 KB are waiting, on `flush()` and on `close()`. Writers of the
 * same file in one process share its descriptor and buffer. A write failure is reported once through `onError` and
 * never thrown into the run; later lines are dropped and the failure says so.
 */
/** Where a writer's lines go: a file (JsonlWriter), or anything else that takes lines in order (a database table). */
export interface LineSink {
  writeLine(line: string): void;
  flush(): void;
  close(): void;
}

export class JsonlWriter implements LineSink {
  private readonly target: AppendTarget;
  private reported = false;
  private closed = false;

  /**
   * `options.inside`: a folder the file must really be inside, reached through no symbolic link and not hard-linked
   * (the workspace's `.agent/`, which comes with the workspace and so is untrusted); otherwise the first write fails.
   */
  constructor(
    readonly path: string,
    private readonly onError: (error: Error) => void = () => {},
    options: { inside?: string } = {},
  ) {
    installExitHook();
    const key = resolve(path);
    let target = targets.get(key);
    // A file that could not be written is tried afresh by a new writer (its directory may exist by now).
    if (!target || target.failed) targets.set(key, (target = new AppendTarget(key)));
    if (options.inside !== undefined) target.inside ??= options.inside;
    target.writers.add(this);
    this.target = target;
  }

  /** Queues one line (already serialised). */
  writeLine(line: string): void {
    if (this.closed || this.target.failed) return;
    this.target.append(line);
  }

  write(value: unknown): void {
    this.writeLine(JSON.stringify(value));
  }

  flush(): void {
    this.target.flush();
  }

  /** Flushes; the file is closed once its last writer closes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const target = this.target;
    target.writers.delete(this);
    if (target.writers.size > 0) {
      target.flush();
      return;
    }
    target.close();
    if (targets.get(target.path) === target) targets.delete(target.path);
  }

  /** @internal the shared file could not be written: tell this writer's owner, once. */
  failed(error: Error): void {
    if (this.reported) return;
    this.reported = true;
    this.onError(error);
  }
}
