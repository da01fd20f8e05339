// 6. Replay: a recorded trace of about 10 000 transitions replayed through the engine (src/debug/replay.ts).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { summarize } from "../lib/common.mjs";
import { statecraftEngine } from "../engines/statecraft.mjs";

const TRANSITIONS = 10_000;

export async function replaySection(sc, distDir, { runs, log }) {
  const replayFile = join(distDir, "debug", "replay.js");
  const sessionFile = join(distDir, "debug", "session.js");
  const replay = sc.replay ?? (existsSync(replayFile) ? (await import(pathToFileURL(replayFile).href)).replay : undefined);
  const loadSession = sc.loadSession ?? (existsSync(sessionFile) ? (await import(pathToFileURL(sessionFile).href)).loadSession : undefined);
  if (typeof replay !== "function" || typeof loadSession !== "function") {
    return { available: false, reason: "no replay() in the built package (src/debug/replay.ts)" };
  }
  // Seven transitions per tool step and three more for the start and the end.
  const steps = Math.ceil((TRANSITIONS - 3) / 7);
  const engine = statecraftEngine(sc, "on");
  const recording = await engine.make(steps);
  await recording.run();
  const { traceLines } = recording.verify();
  // The recording's workspace holds the trace until the replays are done.
  const file = recording.traceFile;
  const sessionId = JSON.parse(readFileSync(file, "utf8").split("\n", 1)[0]).sessionId;
  const times = [];
  const loadTimes = [];
  let identical = true;
  let divergence;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const session = await loadSession(file, sessionId);
    const t1 = performance.now();
    const result = await replay(session);
    const t2 = performance.now();
    loadTimes.push(t1 - t0);
    times.push(t2 - t1);
    identical &&= result.identical;
    divergence ??= result.divergence?.message;
  }
  recording.dispose();
  const replaySeconds = summarize(times.map((ms) => ms / 1000));
  const loadSeconds = summarize(loadTimes.map((ms) => ms / 1000));
  log(`  ${traceLines} lines: load ${loadSeconds.median.toFixed(2)} s, replay ${replaySeconds.median.toFixed(2)} s, identical: ${identical}${divergence ? ` (${divergence})` : ""}`);
  return { available: true, transitions: traceLines, steps, loadSeconds, replaySeconds, identical, ...(divergence ? { divergence } : {}) };
}
