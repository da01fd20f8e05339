import type { CallRecord } from "../context.js";

/**
 * The batch with each record replaced by what `change` returns for it. Records are values: a changed one is a new
 * object, the others are reused, and a batch where nothing changed is returned as it is (no copy per step).
 */
export function replaceRecords(batch: readonly CallRecord[], change: (record: CallRecord) => CallRecord): readonly CallRecord[] {
  let out: CallRecord[] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const next = change(batch[i]);
    if (next === batch[i]) continue;
    out ??= batch.slice();
    out[i] = next;
  }
  return out ?? batch;
}

/**
 * `{ ...record, ...fields }`: the same keys in the same order, written with `Object.assign`. In V8 (Node 20) a spread
 * copy given a property its source lacks (`{ ...record, permission }`) is made about ten times slower than this (and
 * outlives the scavenges, bench/notes.md "Promoted bytes"); a step changes its call's record two or three times.
 */
export function withFields(record: CallRecord, fields: Partial<CallRecord>): CallRecord {
  return Object.assign({}, record, fields);
}

/** The records whose result is known and was not yet announced, marked as announced now; undefined when there are none. */
export function markAnnounced(batch: readonly CallRecord[]): { batch: readonly CallRecord[]; announced: readonly CallRecord[] } | undefined {
  // Runs several times a step and mostly finds nothing: a plain scan first, no closure made.
  let any = false;
  for (let i = 0; i < batch.length && !any; i++) any = batch[i].result !== undefined && batch[i].announced !== true;
  if (!any) return undefined;
  let announced: CallRecord[] | undefined;
  const marked = replaceRecords(batch, (record) => {
    if (!record.result || record.announced) return record;
    const next = withFields(record, { announced: true });
    (announced ??= []).push(next);
    return next;
  });
  return announced ? { batch: marked, announced } : undefined;
}
