// What signing a stored run costs statecraft/dbos (docs/scale-out.md "What the agent can't reach"): per suspension,
// the run is JSON-serialised (as before) and signed; per resumption, verified and parsed. Paired in one process,
// interleaved rounds, so the ratio holds under load where the absolute times do not.
// Usage: npm run build && node bench/signed-run.mjs [messages=200] [bytesPerMessage=1000]
import { performance } from "node:perf_hooks";
import { resolveRunKey } from "../dist/dbos/run-key.js";

const MESSAGES = Number(process.argv[2] ?? 200);
const BYTES = Number(process.argv[3] ?? 1000);
const key = resolveRunKey("bench-key-0123456789abcdef0123456789abcdef");
const run = {
  v: 1,
  sessionId: "s",
  runId: "r",
  status: "suspended",
  messages: Array.from({ length: MESSAGES }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: "x".repeat(BYTES) })),
  batch: [{ call: { id: "call_1", name: "edit", input: { path: "a.txt" } }, status: "pending" }],
};
const scope = ["statecraft/dbos stored run 1", "s", "r", 0, "digest"];
const rounds = 30;
const each = 20;
let plain = 0;
let signed = 0;
for (let round = 0; round < rounds; round++) {
  let t = performance.now();
  for (let i = 0; i < each; i++) JSON.parse(JSON.stringify(run));
  plain += performance.now() - t;
  t = performance.now();
  for (let i = 0; i < each; i++) {
    const text = JSON.stringify(run);
    const sig = key.sign(scope, text);
    if (!key.verify(scope, text, sig)) throw new Error("does not verify");
    JSON.parse(text);
  }
  signed += performance.now() - t;
}
const n = rounds * each;
const kb = (JSON.stringify(run).length / 1024).toFixed(0);
console.log(`stored run of ${MESSAGES} messages (${kb} KiB): serialise+parse ${(plain / n).toFixed(3)} ms, with sign+verify ${(signed / n).toFixed(3)} ms, ratio ${(signed / plain).toFixed(2)}`);
