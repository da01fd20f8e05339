import type { AnyStateMachine } from "xstate";
import { chartFromDefinition, machineChart, type MachineChart } from "./chart.js";
import type { InspectorRecord, PermissionAnsweredBy } from "./protocol.js";
import type { Json } from "./serialize.js";

/** A connected page, as the hub sees it: something to send text to. */
export interface PageConnection {
  send(text: string): void;
}

interface PendingPermission {
  sessionId: string;
  resolve(answer: "allow" | "deny"): void;
}

/** At most this many `problem` records are kept; the last one says that more were not. */
const MAX_PROBLEMS = 200;

/**
 * The inspector's memory and switchboard, apart from any transport: every record in order (so a page that
 * connects late is sent the whole run so far), the connected pages, the charts already sent, and the permission
 * requests waiting for a page's answer.
 */
export class InspectorHub {
  private readonly records: string[] = [];
  private readonly pages = new Set<PageConnection>();
  private readonly machineCharts = new WeakMap<object, string>();
  private readonly definitionCharts = new Map<string, string | null>();
  private readonly pending = new Map<string, PendingPermission>();
  private readonly pageWaiters = new Set<(error?: Error) => void>();
  private chartCount = 0;
  private permissionCount = 0;
  private problems = 0;
  private noPageTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly permissionGraceMs: number) {}

  get pageCount(): number {
    return this.pages.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  add(record: InspectorRecord): void {
    if (this.closed) return;
    this.addText(JSON.stringify(record));
  }

  /** A record already serialised (the JSON of an `InspectorRecord`): the run observer writes its records as text. */
  addText(text: string): void {
    if (this.closed) return;
    this.records.push(text);
    const message = `{"type":"record","record":${text}}`;
    for (const page of this.pages) page.send(message);
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
    const known = this.definitionCharts.get(definition);
    if (known !== undefined) return known ?? undefined;
    let id: string | null = null;
    try {
      const chart = chartFromDefinition(definition);
      id = chart.states.length > 0 ? this.addChart(chart) : null;
    } catch (error) {
      this.problem(`the definition of actor ${actorName} could not be drawn: ${(error as Error).message}`);
    }
    this.definitionCharts.set(definition, id);
    return id ?? undefined;
  }

  private addChart(chart: MachineChart): string {
    const chartId = `c${this.chartCount++}`;
    this.add({ kind: "chart", chartId, chart });
    return chartId;
  }

  /** A page said hello: send it the hello and everything so far, then every new record. */
  addPage(page: PageConnection, hello: Record<string, Json>): void {
    page.send(JSON.stringify({ type: "hello", ...hello, replay: this.records.length }));
    page.send(`{"type":"records","records":[${this.records.join(",")}]}`);
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
   * (another prompt answered first) withdraws it from the pages and rejects with the signal's reason.
   */
  requestPermission(sessionId: string, call: Json, reason: string, signal: AbortSignal | undefined): Promise<"allow" | "deny"> {
    if (this.closed) return Promise.resolve("deny");
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = `p${++this.permissionCount}`;
    return new Promise<"allow" | "deny">((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.recordAnswer(id, "deny", "elsewhere");
        reject(signal?.reason);
      };
      this.pending.set(id, {
        sessionId,
        resolve: (answer) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.add({ kind: "permission", time: new Date().toISOString(), id, sessionId, call, reason });
      if (this.pages.size === 0) this.armNoPageTimer();
    });
  }

  /** A page's answer. Returns a reason when it cannot be applied. */
  answer(id: string, answer: "allow" | "deny", by: PermissionAnsweredBy): string | undefined {
    const pending = this.pending.get(id);
    if (!pending) return `permission request ${id} is not waiting for an answer (already answered or withdrawn)`;
    this.pending.delete(id);
    this.recordAnswer(id, answer, by);
    pending.resolve(answer);
    return undefined;
  }

  private recordAnswer(id: string, answer: "allow" | "deny", by: PermissionAnsweredBy): void {
    this.add({ kind: "permission_answer", time: new Date().toISOString(), id, answer, by });
  }

  private armNoPageTimer(): void {
    if (this.noPageTimer || this.pending.size === 0) return;
    this.noPageTimer = setTimeout(() => {
      this.noPageTimer = undefined;
      if (this.pages.size > 0) return;
      for (const id of [...this.pending.keys()]) this.answer(id, "deny", "no_page");
    }, this.permissionGraceMs);
    this.noPageTimer.unref?.();
  }

  /** Denies what still waits and forgets the pages. */
  close(): void {
    if (this.closed) return;
    for (const id of [...this.pending.keys()]) this.answer(id, "deny", "closed");
    this.closed = true;
    if (this.noPageTimer) clearTimeout(this.noPageTimer);
    this.pages.clear();
    for (const wake of [...this.pageWaiters]) wake(new Error("the inspector closed before a page connected"));
  }
}
