// A statecraft/dbos worker for bench/dbos.mjs: node worker.mjs '<json config>'. Its model answers each run with four
// instant tool calls and a final answer (5 model calls, 4 tool calls: 5 steps), by the turn each request is at.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool } from "../../dist/index.js";
import { createWorker, turnScript } from "../../dist/dbos/index.js";

const config = JSON.parse(process.argv[2]);
const tick = defineTool({ name: "tick", description: "Does nothing.", risk: "read", inputSchema: { type: "object" }, execute: () => "ok" });
const steps = [
  ...Array.from({ length: 4 }, () => ({ toolCalls: [{ name: "tick", input: {} }] })),
  { text: "done" },
];
// A run that should hang (the SIGKILL measurement) says so in its prompt: its first tool call then never ends here.
const hang = defineTool({ name: "hang", description: "Hangs.", risk: "read", inputSchema: { type: "object" }, execute: () => (config.hang ? new Promise(() => {}) : "ok") });
const worker = createWorker({
  database: config.database,
  model: turnScript(config.hang !== undefined ? [{ toolCalls: [{ name: "hang", input: {} }] }, { text: "done" }] : steps),
  tools: [tick, hang],
  id: config.id,
  concurrency: config.concurrency,
  cwd: config.cwd,
  ...(config.deadAfterMs ? { deadAfterMs: config.deadAfterMs } : {}),
});
await worker.start();
writeFileSync(join(config.cwd, `${config.id}.ready`), "1");
process.on("SIGTERM", async () => {
  await worker.stop();
  process.exit(0);
});
