// Garbage the collector promotes: KB per step V8 moves to old space, for the engine machine alone and for query() with
// the trace on, each layer in several fresh processes (V8 decides per process which allocation sites to tenure, so
// one process says little). Measured twice: with XState as published, and with the three changes XState needs made
// while it loads by bench/lib/xstate-changes.cjs (bench/notes.md, "Promoted bytes: the cause").
import { XSTATE_CHANGES, measurePromoted } from "../lib/promoted.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** @returns rows of { layer, variant, perProcessKB, medianKB, minKB, maxKB, allocatedKB } */
export function promotedBytes({ steps = 2000, runs = 3, processes = 5, log = () => {} } = {}) {
  const variants = [
    ["published", []],
    ["xstate-changed", ["--require", XSTATE_CHANGES]],
  ];
  const rows = [];
  for (const [variant, flags] of variants) {
    for (const layer of ["machine", "on"]) {
      const measured = Array.from({ length: processes }, () => measurePromoted(layer, { steps, runs, flags }));
      const perProcessKB = measured.map((m) => Math.round(m.promotedKB * 100) / 100);
      const row = {
        layer,
        variant,
        perProcessKB,
        medianKB: median(perProcessKB),
        minKB: Math.min(...perProcessKB),
        maxKB: Math.max(...perProcessKB),
        allocatedKB: Math.round(median(measured.map((m) => m.allocatedKB)) * 10) / 10,
      };
      rows.push(row);
      log(`  ${layer.padEnd(8)} ${variant.padEnd(16)} promoted ${row.medianKB.toFixed(2)} KB/step (median of ${processes} processes, ${row.minKB}–${row.maxKB}), allocated ${row.allocatedKB} KB/step`);
    }
  }
  return { steps, runs, processes, rows };
}
