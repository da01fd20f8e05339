import { createHash } from "../util/node-crypto.js";
import type { AnyStateMachine } from "xstate";
import { chartFromDefinition, machineChart, type MachineChart } from "./chart.js";
import { shownCall } from "./permission-call.js";
import type { InspectorRecord, PermissionAnsweredBy } from "./protocol.js";
import { DEFAULT_MAX_BYTES, RecordStore, type Dropped, type RecordMeta } from "./record-store.js";
import type { Json } from "./serialize.js";

/** A connected page, as the hub sees it: something to send text to. */
export interface PageConnection {
  send(text: string): void;
}

/**
 * A record kept before it is written: its text, or what writes it (see `addLater`), with whose it is. Only while no
 * page is connected; a page that connects, a permission answer or a look at the kept bytes has them written first.
 */
type Waiting = { text: string; meta: RecordMeta } | { write: () => string; meta: RecordMeta };

interface PendingPermission {
  sessionId: string;
  /** Why the page was not sent the whole call, when it was not: then the page may only deny it. */
  unshown: string | undefined;
  /** Also asked elsewhere (a terminal), which answers it when no page does: no page connected is no reason to deny it. */
  askedElsewhere: boolean;
  resolve(answer: "allow" | "deny"): void;
}

/** Snapshot statuses after which an actor does no more. */
const FINAL_STATUS = new Set(["done", "error", "stopped"]);

/** A batch of records for the pages is sent once it holds this many characters, without waiting for the next turn. */
const MAX_BATCH_CHARS = 256 * 1024;

/** At most this many `problem` records are kept; the last one says that more were not. */
const MAX_PROBLEMS = 200;

/**
 * The inspector's memory and switchboard, apart from any transport: the records in order (so a page that connects
 * late is sent the run so far; at most `maxBytes` of them, see RecordStore), the connected pages, the charts already
 * sent, and the permission requests waiting for a page's answer.
 */
export class InspectorHub {
  private readonly records: RecordStore;
  private readonly pages = new Set<PageConnection>();
  private readonly machineCharts = new WeakMap<object, string>();
  /** By a hash of the definition: a client sending many large definitions must not make the hub keep their text. */
  private readonly definitionCharts = new Map<string, string | null>();
  private readonly droppedSaid = { ended: false, live: false };
  private readonly pending = new Map<string, PendingPermission>();
  private readonly pageWaiters = new Set<(error?: Error) => void>();
  private chartCount = 0;
  private permissionCount = 0;
  private problems = 0;
  private noPageTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * Records not yet sent to the pages: those added in one turn of the event loop go in one message. A busy app
   * reports thousands of events a second; one WebSocket message each cost the page most of its frame time.
   */
  private outgoing: string[] = [];
  /** Records kept unwritten while no page is connected, in order, and about how many bytes they hold. */
  private waiting: Waiting[] = [];
  private waitingBytes = 0;
  private outgoingChars = 0;
  private flushQueued = false;

  constructor(
    private readonly permissionGraceMs: number,
    maxBytes = DEFAULT_MAX_BYTES,
  ) {
    this.records = new RecordStore(maxBytes);
  }

  get pageCount(): number {
    return this.pages.size;
  }

  /** The bytes of records kept (the UTF-8 size of their JSON), at most about `maxBytes`. */
  get retainedBytes(): number {
    this.writeWaiting();
    return this.records.retainedBytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  add(record: InspectorRecord): void {
    if (this.closed) return;
    this.keep(JSON.stringify(record), metaOf(record));
  }

  /**
   * A record already serialised (the JSON of an `InspectorRecord`): the run observer writes its records as text.
   * `runSessionId` is the run it belongs to, so that it goes with the run's other records when memory runs short.
   */
  addText(text: string, runSessionId?: string): void {
    if (this.closed) return;
    this.keep(text, runSessionId === undefined ? {} : { owner: `run:${runSessionId}` });
  }

  /**
   * A record of a run that is written only when it must be: at once while a page is connected; otherwise when a page
   * connects, when the kept bytes are looked at, or when `estimate` (about the bytes the unwritten record holds, see
   * approxBytes) added to the rest would pass `maxBytes`. Until then the hub keeps `write` and what it holds, not the
   * text: with no page, most records are never written. `write` must give the same text whenever it is called (it
   * holds copies of whatever changes in place) and never throw (if it does, a problem says so).
   */
  addLater(write: () => string, estimate: number, runSessionId: string): void {
    if (this.closed) return;
    const meta: RecordMeta = { owner: `run:${runSessionId}` };
    if (this.pages.size > 0) {
      const text = this.written(write, meta);
      if (text !== undefined) this.keep(text, meta);
      return;
    }
    this.waiting.push({ write, meta });
    this.waitingBytes += estimate;
    if (this.waitingBytes + this.records.retainedBytes > this.records.maxBytes) this.writeWaiting();
  }

  private keep(text: string, meta: RecordMeta): void {
    if (this.waiting.length > 0) {
      // Behind records not written yet: in order, never before them, and within the same bound.
      this.waiting.push({ text, meta });
      this.waitingBytes += text.length;
      if (this.waitingBytes + this.records.retainedBytes > this.records.maxBytes) this.writeWaiting();
      return;
    }
    this.store(text, meta);
  }

  /** Writes the records kept unwritten and keeps their text, in order, as if they had been written when added. */
  private writeWaiting(): void {
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    this.waitingBytes = 0;
    for (const item of waiting) {
      const text = "text" in item ? item.text : this.written(item.write, item.meta);
      if (text !== undefined) this.store(text, item.meta);
    }
  }

  private written(write: () => string, meta: RecordMeta): string | undefined {
    try {
      return write();
    } catch (error) {
      this.problem(`the inspector could not write a record of ${meta.owner ?? "a run"}: ${(error as Error)?.message ?? String(error)}`);
      return undefined;
    }
  }

  private store(text: string, meta: RecordMeta): void {
    const dropped = this.records.add(text, meta);
    if (this.pages.size > 0) {
      this.outgoing.push(text);
      this.outgoingChars += text.length;
      if (this.outgoingChars >= MAX_BATCH_CHARS) this.flush();
      else if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => {
          this.flushQueued = false;
          this.flush();
        });
      }
    }
    if (dropped) this.sayDropped(dropped);
  }

  /** Sends the pages what was added since the last flush: one record as `record`, more as one `records`. */
  private flush(): void {
    if (this.outgoing.length === 0) return;
    const texts = this.outgoing;
    this.outgoing = [];
    this.outgoingChars = 0;
    const message = texts.length === 1 ? `{"type":"record","record":${texts[0]}}` : `{"type":"records","records":[${texts.join(",")}]}`;
    for (const page of [...this.pages]) page.send(message);
  }

  /** Said once for ended and once for live records: from then on the cap keeps dropping them the same way. */
  private sayDropped(dropped: Dropped): void {
    const cap = `the inspector keeps at most ${megabytes(this.records.maxBytes)} of records (maxBytes)`;
    const later = "a page that connects now does not see them; later drops are not reported again";
    if (dropped.ended.records > 0 && !this.droppedSaid.ended) {
      this.droppedSaid.ended = true;
      const { records, bytes, owners } = dropped.ended;
      this.problem(`${cap}: it dropped the oldest ${records} records (${megabytes(bytes)}) of ${owners} ended actor${owners === 1 ? "" : "s"} or run${owners === 1 ? "" : "s"}; ${later}`);
    }
    if (dropped.live.records > 0 && !this.droppedSaid.live) {
      this.droppedSaid.live = true;
      const { records, bytes } = dropped.live;
      this.problem(
        `${cap}: ended actors and runs were not enough, so it dropped the oldest ${records} records (${megabytes(bytes)}) of live ones, keeping each one's first and latest record; ${later}`,
      );
    }
  }

  problem(message: string): void {
    this.problems++;
    if (this.problems > MAX_PROBLEMS + 1) return;
    const text = this.problems > MAX_PROBLEMS ? `more than ${MAX_PROBLEMS} problems; the rest are not listed` : message;
    this.add({ kind: "problem", time: new Date().toISOString(), message: text });
  }

  /** The chart id of a machine, sending its chart first if it is new. */
  chartOf(machine: AnyStateMachine): string {
    const known = this.machineCharts.get(machine);
    if (known) return known;
    const id = this.addChart(machineChart(machine));
    this.machineCharts.set(machine, id);
    return id;
  }

  /**
   * The chart id of a machine known by its definition text, or undefined for actors that are not state machines (or
   * whose definition cannot be read, which is reported once).
   */
  chartOfDefinition(definition: string, actorName: string): string | undefined {
    const key = createHash("sha256").update(definition).digest("base64");
    const known = this.definitionCharts.get(key);
    if (known !== undefined) return known ?? undefined;
    let id: string | null = null;
    try {
      const chart = chartFromDefinition(definition);
      id = chart.states.length > 0 ? this.addChart(chart) : null;
      if (chart.cut) {
        const where = chart.cut.slice(0, 3).join(", ") + (chart.cut.length > 3 ? ` and ${chart.cut.length - 3} more` : "");
        this.problem(
          `the definition of actor ${actorName} arrived cut by the client's serialization depth limit (at ${where}): what was cut is not drawn; pass createWebSocketInspector({ url, serializationDepthLimit: 100 }) to send it whole`,
        );
      }
    } catch (error) {
      this.problem(`the definition of actor ${actorName} could not be drawn: ${(error as Error).message}`);
    }
    this.definitionCharts.set(key, id);
    return id ?? undefined;
  }

  private addChart(chart: MachineChart): string {
    const chartId = `c${this.chartCount++}`;
    this.add({ kind: "chart", chartId, chart });
    return chartId;
  }

  /** A page said hello: send it the hello and everything so far, then every new record. */
  addPage(page: PageConnection, hello: Record<string, Json>): void {
    // The pages already connected get what is waiting; the new one gets it in its replay, not twice.
    this.writeWaiting();
    this.flush();
    page.send(JSON.stringify({ type: "hello", ...hello, replay: this.records.length }));
    page.send(`{"type":"records","records":[${this.records.texts().join(",")}]}`);
    this.pages.add(page);
    if (this.noPageTimer) {
      clearTimeout(this.noPageTimer);
      this.noPageTimer = undefined;
    }
    for (const wake of [...this.pageWaiters]) wake();
  }

  removePage(page: PageConnection): void {
    if (!this.pages.delete(page)) return;
    if (this.pages.size === 0) this.armNoPageTimer();
  }

  /** Resolves once a page is connected. */
  waitForPage(timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    if (this.pages.size > 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        this.pageWaiters.delete(done);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
      };
      const woke = (error?: Error) => {
        done();
        if (error) reject(error);
        else resolve();
      };
      const aborted = () => {
        done();
        reject(signal?.reason ?? new Error("aborted"));
      };
      if (signal?.aborted) return aborted();
      if (this.closed) return reject(new Error("the inspector is closed"));
      this.pageWaiters.add(woke);
      signal?.addEventListener("abort", aborted, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          done();
          reject(new Error(`no inspector page connected within ${timeoutMs} ms`));
        }, timeoutMs);
      }
    });
  }

  /**
   * Shows a permission request on the pages and waits for an answer. It is denied when the inspector closes or when
   * no page is connected for the grace period (a page being reloaded comes back within it); an abort of `signal`
   * (another prompt answered first) withdraws it from the pages and rejects with the signal's reason. The call is sent
   * whole when it fits (see permission-call.ts); when it does not, a page may only deny it. A request `askedElsewhere`
   * too waits however long no page is connected: the other prompt answers it, and a page opened later is shown it.
   * `hidden`: why `call` is not what would run (redacted), so the page may only deny it.
   */
  requestPermission(
    sessionId: string,
    call: unknown,
    reason: string,
    signal: AbortSignal | undefined,
    askedElsewhere = false,
    hidden?: string,
  ): Promise<"allow" | "deny"> {
    if (this.closed) return Promise.resolve("deny");
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = `p${++this.permissionCount}`;
    return new Promise<"allow" | "deny">((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.recordAnswer(id, "deny", "elsewhere");
        reject(signal?.reason);
      };
      const shown = shownCall(call, hidden);
      this.pending.set(id, {
        sessionId,
        unshown: shown.why,
        askedElsewhere,
        resolve: (answer) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.add({ kind: "permission", time: new Date().toISOString(), id, sessionId, call: shown.call, reason, whole: shown.whole, ...(shown.why ? { unshown: shown.why } : {}) });
      if (this.pages.size === 0 && !askedElsewhere) this.armNoPageTimer();
    });
  }

  /** A page's answer. Returns a reason when it cannot be applied. */
  answer(id: string, answer: "allow" | "deny", by: PermissionAnsweredBy): string | undefined {
    const pending = this.pending.get(id);
    if (!pending) return `permission request ${id} is not waiting for an answer (already answered or withdrawn)`;
    if (answer === "allow" && by === "page" && pending.unshown !== undefined) {
      return `permission request ${id} cannot be allowed from the page: ${pending.unshown}; deny it on the page, or answer it in the terminal`;
    }
    this.pending.delete(id);
    this.recordAnswer(id, answer, by);
    pending.resolve(answer);
    return undefined;
  }

  private recordAnswer(id: string, answer: "allow" | "deny", by: PermissionAnsweredBy): void {
    this.writeWaiting();
    this.records.settled(id);
    this.add({ kind: "permission_answer", time: new Date().toISOString(), id, answer, by });
  }

  /** The requests only a page can answer: those a missing page denies. */
  private pageOnly(): string[] {
    return [...this.pending].filter(([, p]) => !p.askedElsewhere).map(([id]) => id);
  }

  private armNoPageTimer(): void {
    if (this.noPageTimer || this.pageOnly().length === 0) return;
    this.noPageTimer = setTimeout(() => {
      this.noPageTimer = undefined;
      if (this.pages.size > 0) return;
      for (const id of this.pageOnly()) this.answer(id, "deny", "no_page");
    }, this.permissionGraceMs);
    this.noPageTimer.unref?.();
  }

  /** Denies what still waits and forgets the pages. */
  close(): void {
    if (this.closed) return;
    for (const id of [...this.pending.keys()]) this.answer(id, "deny", "closed");
    this.flush();
    this.closed = true;
    if (this.noPageTimer) clearTimeout(this.noPageTimer);
    this.pages.clear();
    for (const wake of [...this.pageWaiters]) wake(new Error("the inspector closed before a page connected"));
  }
}

/** Whose record it is, for dropping when memory runs short. */
function metaOf(record: InspectorRecord): RecordMeta {
  switch (record.kind) {
    case "actor":
      return { owner: `actor:${record.sessionId}`, first: true, ...(FINAL_STATUS.has(record.snapshot.status ?? "") ? { ends: true } : {}) };
    case "snapshot":
      return { owner: `actor:${record.sessionId}`, ...(FINAL_STATUS.has(record.snapshot.status ?? "") ? { ends: true } : {}) };
    case "event":
      return { owner: `actor:${record.sessionId}` };
    case "actor_end":
      return { owner: `actor:${record.sessionId}`, ends: true };
    case "run":
      return { owner: `run:${record.sessionId}`, first: true };
    case "run_end":
      return { owner: `run:${record.sessionId}`, ends: true };
    case "enter":
    case "messages":
    case "agent":
      return { owner: `run:${record.sessionId}` };
    case "trace_line":
      // A session's done line ends its run; a later line (its next run) makes it live again.
      return { owner: `run:${record.sessionId}`, ends: isDone(record.line) };
    case "permission":
      return { owner: `run:${record.sessionId}`, permission: record.id };
    default:
      return {};
  }
}

function isDone(line: Json): boolean {
  const l = line as { kind?: unknown; state?: unknown } | null;
  return l !== null && typeof l === "object" && l.kind === "state" && l.state === "done";
}

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${mb >= 10 ? Math.round(mb) : Number(mb.toFixed(1))} MB`;
}
