/** The default of `maxBytes`: 64 MB of records. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** Dropping goes down to this share of the cap, so that it happens once in a while rather than at every record. */
const DROP_TO = 0.75;

/**
 * What a record is, as far as keeping it goes. `owner` is the actor or run it belongs to (`actor:ID`, `run:ID`);
 * records without one (charts, problems, answers) are always kept.
 */
export interface RecordMeta {
  owner?: string;
  /** The owner's first record (its `actor` or `run` record): kept while the owner lives, for the page to know it. */
  first?: boolean;
  /**
   * The owner is over after this record (an actor's final snapshot, a run's `run_end`); `false` says it is going on
   * again (a session's next run, fed by trace lines, after its `done`).
   */
  ends?: boolean;
  /** The id of a permission request: kept while it waits for an answer. */
  permission?: string;
}

interface Kept extends RecordMeta {
  text: string;
  bytes: number;
  dropped?: boolean;
}

interface Owner {
  ended: boolean;
  count: number;
  latest: Kept | undefined;
}

/** How many records and bytes one round of dropping let go, and of how many owners. */
export interface Dropped {
  ended: { records: number; bytes: number; owners: number };
  live: { records: number; bytes: number };
}

/**
 * Every record the inspector keeps (a page that connects late is sent them all), in order, with their size counted
 * (the UTF-8 bytes of their JSON, what a page is sent). Past `maxBytes` the oldest records of ended actors and runs
 * are dropped first; if that is not enough, the oldest records of live ones, except what a page needs to make sense
 * of the rest: each live owner's first and latest record, pending permission requests, charts and problems.
 */
export class RecordStore {
  private records: Kept[] = [];
  private readonly owners = new Map<string, Owner>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  get retainedBytes(): number {
    return this.bytes;
  }

  get length(): number {
    return this.records.length;
  }

  /** The records' JSON, in order. */
  texts(): string[] {
    return this.records.map((r) => r.text);
  }

  /** Keeps a record; returns what had to be dropped to stay within the cap, if anything was. */
  add(text: string, meta: RecordMeta = {}): Dropped | undefined {
    const kept: Kept = { ...meta, text, bytes: Buffer.byteLength(text, "utf8") };
    this.records.push(kept);
    this.bytes += kept.bytes;
    if (kept.owner !== undefined) {
      let owner = this.owners.get(kept.owner);
      if (!owner) {
        owner = { ended: false, count: 0, latest: undefined };
        this.owners.set(kept.owner, owner);
      }
      owner.count++;
      owner.latest = kept;
      if (kept.ends !== undefined) owner.ended = kept.ends;
    }
    return this.bytes > this.maxBytes ? this.drop() : undefined;
  }

  /** A permission request was answered: its record may go with the rest of its run. */
  settled(permission: string): void {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const r = this.records[i]!;
      if (r.permission === permission) {
        delete r.permission;
        return;
      }
    }
  }

  private drop(): Dropped {
    const target = Math.floor(this.maxBytes * DROP_TO);
    const dropped: Dropped = { ended: { records: 0, bytes: 0, owners: 0 }, live: { records: 0, bytes: 0 } };
    const endedOwners = new Set<string>();
    // Ended actors and runs first, oldest record first.
    for (const r of this.records) {
      if (this.bytes <= target) break;
      if (r.owner === undefined || r.permission !== undefined || !this.owners.get(r.owner)?.ended) continue;
      this.release(r);
      endedOwners.add(r.owner);
      dropped.ended.records++;
      dropped.ended.bytes += r.bytes;
    }
    dropped.ended.owners = endedOwners.size;
    // Then the live ones' oldest records, keeping each one's first and latest.
    for (const r of this.records) {
      if (this.bytes <= target) break;
      if (r.dropped || r.owner === undefined || r.permission !== undefined || r.first) continue;
      const owner = this.owners.get(r.owner)!;
      if (owner.latest === r) continue;
      this.release(r);
      dropped.live.records++;
      dropped.live.bytes += r.bytes;
    }
    this.records = this.records.filter((r) => !r.dropped);
    return dropped;
  }

  private release(r: Kept): void {
    r.dropped = true;
    this.bytes -= r.bytes;
    const owner = this.owners.get(r.owner!)!;
    owner.count--;
    if (owner.latest === r) owner.latest = undefined;
    if (owner.count === 0 && owner.ended) this.owners.delete(r.owner!);
  }
}
