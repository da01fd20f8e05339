// The goals of the benchmark issue checked against the results, and docs/performance.md rendered from them.

const GOAL = {
  floorRatio: 4.0,
  memoryFloorRatio: 3.0,
  otelRatio: 1.2,
  piRatio: 3.5,
  linearGrowth: 1.15,
  inspectorRatio: 1.3,
  peerAdvantage: 40,
  parallelMs: 65,
  concurrencyRatio: 3,
  promotedKB: 2,
};

/** 12 345.6 → "12 346"; 12.34 → "12.3"; small numbers keep two decimals. */
export function num(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "n/a";
  if (!Number.isFinite(x)) return "∞";
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2);
  const [int, frac] = Math.abs(x).toFixed(d).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, " ");
  return `${x < 0 ? "−" : ""}${grouped}${frac ? `.${frac}` : ""}`;
}
const ratio = (x) => (x === null || x === undefined ? "n/a" : `${num(x, x >= 100 ? 0 : x >= 10 ? 1 : 2)}×`);

const rowOf = (results, id) => results.loop?.rows.find((r) => r.id === id);

/** Each goal of the issue: what it asks, what was measured, met or not (null: not measured). */
export function goalsOf(results) {
  const goals = [];
  const on = rowOf(results, "statecraft-on");
  const sizes = results.loop?.sizes ?? [];
  if (on) {
    const at = (key) => sizes.map((s) => [s, on.sizes[s]?.[key]]).filter(([, v]) => v !== null && v !== undefined);
    const floor = at("xFloor");
    goals.push({
      goal: `statecraft, trace on, within ${GOAL.floorRatio}× of the bare ten-state XState graph`,
      measured: floor.map(([s, v]) => `${ratio(v)} at N = ${num(s, 0)}`).join(", ") || "n/a",
      met: floor.length ? floor.every(([, v]) => v <= GOAL.floorRatio) : null,
    });
    const memory = rowOf(results, "statecraft-memory");
    if (memory) {
      const memoryFloor = sizes.map((s) => [s, memory.sizes[s]?.xFloor]).filter(([, v]) => v !== null && v !== undefined);
      goals.push({
        goal: `statecraft, store: "memory", within ${GOAL.memoryFloorRatio}× of the bare ten-state XState graph`,
        measured: memoryFloor.map(([s, v]) => `${ratio(v)} at N = ${num(s, 0)}`).join(", ") || "n/a",
        met: memoryFloor.length ? memoryFloor.every(([, v]) => v <= GOAL.memoryFloorRatio) : null,
      });
    }
    const pi = at("xPi");
    goals.push({
      goal: `statecraft, trace on, within ${GOAL.piRatio}× of pi-agent-core`,
      measured: pi.map(([s, v]) => `${ratio(v)} at N = ${num(s, 0)}`).join(", ") || "n/a",
      met: pi.length ? pi.every(([, v]) => v <= GOAL.piRatio) : null,
    });
    // Linear on every path: the contextWindow row's estimate runs at every step, the trace on and off rows do not.
    const linear = [
      ["trace on", on],
      ["trace off", rowOf(results, "statecraft-off")],
      ["store: \"memory\"", rowOf(results, "statecraft-memory")],
      ["contextWindow set, no usage", rowOf(results, "statecraft-window")],
    ].filter(([, row]) => row?.growth);
    goals.push({
      goal: `statecraft linear in N (per-step cost from N = ${num(sizes[0], 0)} to ${num(sizes[1], 0)} grows at most ${GOAL.linearGrowth}×, also with contextWindow set and no usage reported)`,
      measured: linear.map(([label, row]) => `${ratio(row.growth.perStep)} (${label})`).join(", ") || "n/a",
      met: linear.length ? linear.every(([, row]) => row.growth.perStep <= GOAL.linearGrowth) : null,
    });
    const inspect = rowOf(results, "statecraft-inspect");
    const overOn = inspect ? sizes.map((s) => [s, inspect.sizes[s]?.median && on.sizes[s]?.median ? inspect.sizes[s].median / on.sizes[s].median : null]).filter(([, v]) => v !== null) : [];
    if (inspect) {
      goals.push({
        goal: `statecraft with an inspector attached and no page, within ${GOAL.inspectorRatio}× of trace on`,
        measured: overOn.map(([s, v]) => `${ratio(v)} at N = ${num(s, 0)}`).join(", ") || "n/a",
        met: overOn.length ? overOn.every(([, v]) => v <= GOAL.inspectorRatio) : null,
      });
    }
    // statecraft/otel's observer: spans of every state, model call and tool call, against the trace alone.
    for (const [id, what] of [["statecraft-otel-noop", "a no-op tracer"], ["statecraft-otel", "a recording tracer"]]) {
      const otel = rowOf(results, id);
      if (!otel) continue;
      const over = sizes.map((s) => [s, otel.sizes[s]?.median && on.sizes[s]?.median ? otel.sizes[s].median / on.sizes[s].median : null]).filter(([, v]) => v !== null);
      goals.push({
        goal: `statecraft with statecraft/otel on ${what}, within ${GOAL.otelRatio}× of trace on`,
        measured: over.map(([s, v]) => `${ratio(v)} at N = ${num(s, 0)}`).join(", ") || "n/a",
        met: over.length ? over.every(([, v]) => v <= GOAL.otelRatio) : null,
      });
    }
    const first = sizes[0];
    const mine = on.sizes[first]?.median;
    const peers = ["ai", "openai-agents", "langgraph"].map((id) => rowOf(results, id)).filter(Boolean);
    const advantages = peers.map((p) => [p.label, p.sizes[first] && p.sizes[first].N === on.sizes[first]?.N ? p.sizes[first].median / mine : null]);
    goals.push({
      goal: `statecraft, trace on, at least ${GOAL.peerAdvantage}× cheaper per step than ai, @openai/agents and LangGraph (N = ${num(first, 0)})`,
      measured: advantages.map(([label, v]) => `${label.split(" ")[0]} ${ratio(v)}`).join(", ") || "n/a",
      met: advantages.length === 3 && advantages.every(([, v]) => v !== null) ? advantages.every(([, v]) => v >= GOAL.peerAdvantage) : null,
    });
  }
  if (results.parallel) {
    goals.push({
      goal: `8 parallel read-only calls of 50 ms in at most ${GOAL.parallelMs} ms`,
      measured: `${num(results.parallel.wallMs.median, 1)} ms (median; ${num(results.parallel.wallMs.min, 1)}–${num(results.parallel.wallMs.max, 1)})`,
      met: results.parallel.wallMs.median <= GOAL.parallelMs,
    });
  }
  if (results.concurrency) {
    goals.push({
      goal: `1 000 concurrent runs of 5 × 100 ms steps within ${GOAL.concurrencyRatio}× of 0.5 s`,
      measured: `${num(results.concurrency.wallMs / 1000, 2)} s (${ratio(results.concurrency.ratio)})`,
      met: results.concurrency.ratio <= GOAL.concurrencyRatio,
    });
  }
  if (results.promoted) {
    const row = (layer, variant) => results.promoted.rows.find((r) => r.layer === layer && r.variant === variant);
    const on = row("on", "published");
    const kb = (r) => (r ? `${num(r.medianKB, 2)} KB (${num(r.minKB, 2)}–${num(r.maxKB, 2)})` : "n/a");
    goals.push({
      goal: `statecraft, trace on, promotes at most ${GOAL.promotedKB} KB a step to old space, without V8 flags`,
      measured: `${kb(on)}; the machine alone ${kb(row("machine", "published"))}; with XState changed as upstream needs: trace on ${kb(row("on", "xstate-changed"))}, the machine ${kb(row("machine", "xstate-changed"))}`,
      met: on ? on.medianKB <= GOAL.promotedKB : null,
    });
  }
  if (results.longRun) {
    const leaks = { ...results.longRun.leakedResources, ...results.longRun.leakedListeners };
    goals.push({
      goal: "10 000-step run with tracing on leaves no listener, timer or handle behind",
      measured: Object.keys(leaks).length ? `left behind: ${JSON.stringify(leaks)}` : "none left behind",
      met: results.longRun.noLeaks,
    });
  }
  return goals;
}

function loopTable(results) {
  const { sizes, rows } = results.loop;
  const lines = [];
  const head = ["loop"];
  for (const s of sizes) head.push(`µs/step N = ${num(s, 0)} (median [IQR])`);
  head.push("×floor", "×pi", `growth ${num(sizes[0], 0)}→${num(sizes[1], 0)}`, `peak heap N = ${num(sizes[1], 0)}`);
  lines.push(`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`);
  for (const row of rows) {
    const cells = [row.label];
    for (const s of sizes) {
      const c = row.sizes[s];
      if (!c) cells.push("n/a");
      else cells.push(`${num(c.median)} [${num(c.q1)}–${num(c.q3)}]${c.N !== s ? ` (at N = ${num(c.N, 0)}†)` : ""}`);
    }
    const ratios = (key) =>
      sizes
        .map((s) => row.sizes[s]?.[key])
        .map((v) => (v === null || v === undefined ? "–" : ratio(v)))
        .join(" / ");
    cells.push(ratios("xFloor"), ratios("xPi"));
    cells.push(row.growth ? `${ratio(row.growth.perStep)}${row.growth.to !== sizes[1] ? "†" : ""}` : "n/a");
    const big = row.sizes[sizes[1]];
    cells.push(big ? `${num(big.peakHeapMB, 1)} MB${big.N !== sizes[1] ? "†" : ""}` : "n/a");
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

function cpuTable(results) {
  const { sizes, rows } = results.loop;
  const lines = ["| loop | " + sizes.map((s) => `CPU µs/step N = ${num(s, 0)}`).join(" | ") + " | ×floor (CPU) | ×pi (CPU) | runs | min–max µs/step (wall) |", "|---|" + sizes.map(() => "---:").join("|") + "|---:|---:|---:|---|"];
  for (const row of rows) {
    const cells = [row.label];
    for (const s of sizes) cells.push(row.sizes[s] ? num(row.sizes[s].cpuMedian) : "n/a");
    const r = (key) => sizes.map((s) => (row.sizes[s]?.[key] == null ? "–" : ratio(row.sizes[s][key]))).join(" / ");
    cells.push(r("xFloorCpu"), r("xPiCpu"));
    cells.push(sizes.map((s) => row.sizes[s]?.runs ?? "–").join(" / "));
    cells.push(sizes.map((s) => (row.sizes[s] ? `${num(row.sizes[s].min)}–${num(row.sizes[s].max)}` : "–")).join(" ; "));
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

export function renderReport(results, notes) {
  const m = results.machine;
  const out = [];
  out.push("# Performance");
  out.push("");
  out.push("<!-- Generated by `npm run bench` (bench/run.mjs) from bench/results.json; edit bench/notes.md or the bench, not this file. -->");
  out.push("");
  out.push(
    "What statecraft's explicit state machine costs, measured against the machine alone (the seed's ten states as a bare XState graph: the floor), a hand-written loop, and the agent loops of other frameworks. Every loop runs N steps of one instant tool call answered by an in-process fake model, in one process, engines alternated run by run, several runs after a warm-up at the measured size; tools and models are built outside the timed region for every engine alike. Absolute figures move with the machine's load; the ratios, measured side by side, move much less.",
  );
  out.push("");
  out.push("## Machine and command");
  out.push("");
  out.push(`- CPU: ${m.cpu}, ${m.cores} cores; memory ${m.memoryGiB} GiB; Node ${m.node}; ${m.platform}`);
  out.push(`- load average at start ${m.loadAverageAtStart.join(", ")}, at end ${m.loadAverageAtEnd?.join(", ") ?? "n/a"} (1, 5, 15 min)${m.loadAverageAtStart[0] > m.cores * 0.75 ? " — the machine was shared with other work while this ran: absolute figures are inflated, ratios less so" : ""}`);
  out.push(`- generated ${results.generatedAt} in ${num(results.durationSeconds, 0)} s (${results.mode} mode)`);
  out.push(`- versions: ${Object.entries(results.versions).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  out.push("- reproduce from a fresh clone: `npm ci && npm run bench` (installs bench/'s own pinned dependencies, builds dist/ when it is missing or stale, runs everything, rewrites this file and bench/results.json); `node bench/run.mjs --full` also measures the slow peers at N = 5 000 however long that takes; `node bench/run.mjs --quick` is a smoke run that writes nothing");
  out.push("");
  out.push("## Goals");
  out.push("");
  out.push("| goal | measured | |");
  out.push("|---|---|---|");
  for (const g of results.goals) out.push(`| ${g.goal} | ${g.measured} | ${g.met === null ? "n/a" : g.met ? "met" : "**missed**"} |`);
  out.push("");

  if (results.loop) {
    out.push("## 1. Loop overhead");
    out.push("");
    out.push("Wall-clock µs per step, median of the measured runs with the interquartile range; ×floor and ×pi are ratios of medians at each size (N = 1 000 / N = 5 000); growth is the per-step cost at the larger size over the smaller one (1.0× is linear, a quadratic loop grows about 5×); peak heap is the most the JS heap plus external memory rose above its level at the start of a run (sampled every 256 steps and at the end), measured on each engine's first run at that size (a warm-up run when it has one), which starts after a collection. The measured runs start on the heap the engine's earlier runs left (a collection forced right before each of them would leave a small young generation that every run must grow again, charging each loop several times over for its allocation rate), after 25 ms to settle; each round starts one engine further along, so no engine always follows the same one.");
    out.push("");
    out.push(loopTable(results));
    out.push("");
    const marked = results.loop.rows.filter((r) => Object.values(r.sizes).some((c) => c.note));
    for (const row of marked) for (const c of Object.values(row.sizes)) if (c.note) out.push(`† ${row.label}: ${c.note}.`);
    if (marked.length) out.push("");
    if (results.loop.missing?.length) {
      out.push(`Not in this run: ${results.loop.missing.map((m) => `${m.label} (${m.error})`).join("; ")}.`);
      out.push("");
    }
    out.push("CPU time per step (user + system of the whole process, so JIT and GC threads count) is steadier than wall time on a shared machine:");
    out.push("");
    out.push(cpuTable(results));
    out.push("");
    out.push("What each loop does per step:");
    out.push("");
    out.push("- **floor**: an XState 5.33 machine with the seed's ten states (`build_context` … `done`); per tool step the seven states statecraft's trace shows (`build_context`, `call_model`, `parse_tool_call`, `validate_tool`, `ask_permission`, `execute_tool`, `append_tool_result`) are entered by one event each, with no work and one subscriber.");
    out.push("- **statecraft**: `query()` from the built package with a `Model` whose `stream()` yields one response per call and a `defineTool` tool (read risk, so allowed without asking); every run writes its transcript and audit, and with the trace on its trace file, checked after the run (7 lines per step + 3)." + (rowOf(results, "statecraft-window") ? " The contextWindow row sets `contextWindow` far beyond what the run fills and its model reports no usage (as local servers often do), so the compaction estimate is checked at every step and never compacts." : "") + (rowOf(results, "statecraft-memory") ? " The `store: \"memory\"` row writes nothing to disk: its trace, transcript, audit and checkpoints are kept in the process, and the trace is checked from `run.trace()`." : ""));
    out.push("- **hand-written loop**: `while` around an async model function, `JSON.parse` of the arguments, an ajv-compiled validator, an async tool, the messages in an array.");
    out.push("- **pi-agent-core**: `runAgentLoop` with an injected stream function returning a pre-ended `AssistantMessageEventStream`, a TypeBox-typed `AgentTool`.");
    out.push("- **ai**: `generateText` with one `tool()` (JSON schema), `stopWhen: stepCountIs(N + 1)`, `MockLanguageModelV3` from `ai/test` whose `doGenerate` answers from a counter (the mock's own record of every call's prompt is cleared on each call: it is test bookkeeping and would hold N² messages).");
    out.push("- **@openai/agents**: `run(agent, input, { maxTurns })` with a custom `Model` whose `getResponse` answers from a counter, a non-strict JSON-schema `tool()`, tracing disabled (`setTracingDisabled(true)`).");
    out.push("- **LangGraph**: `createReactAgent` from `@langchain/langgraph/prebuilt` with a `BaseChatModel` subclass answering from a counter and a `@langchain/core` `tool()`; `recursionLimit` 2N + 10.");
    out.push("");
  }

  if (results.parallel) {
    const p = results.parallel;
    out.push("## 2. Parallel tools");
    out.push("");
    out.push(`One model response with ${p.calls} read-only calls that each take ${p.toolMs} ms, through \`query()\` with the trace on (two instant model calls around them). Ideal ${p.idealMs} ms, goal ≤ ${p.goalMs} ms: **${num(p.wallMs.median, 1)} ms** median of ${p.wallMs.runs} runs (min ${num(p.wallMs.min, 1)}, max ${num(p.wallMs.max, 1)}) — ${p.met ? "met" : "missed"}.${p.warnings && Object.keys(p.warnings).length ? ` The ${p.runsWithWarnings} runs raised process warnings: ${Object.entries(p.warnings).map(([name, count]) => `${name} ×${count}`).join(", ")} (see the profile notes).` : ""}`);
    out.push("");
  }
  if (results.streaming) {
    const s = results.streaming;
    out.push("## 3. Streaming");
    out.push("");
    out.push(`${num(s.deltas, 0)} text deltas from one model call, each delivered as a \`text_delta\` event; µs per delta, median of ${s.direct.runs} runs [min–max]:`);
    out.push("");
    out.push("| path | µs per delta | cost over iterating the stream directly |");
    out.push("|---|---:|---:|");
    out.push(`| iterating \`model.stream()\` directly | ${num(s.direct.median)} [${num(s.direct.min)}–${num(s.direct.max)}] | – |`);
    out.push(`| \`query()\`, trace off | ${num(s.queryTraceOff.median)} [${num(s.queryTraceOff.min)}–${num(s.queryTraceOff.max)}] | +${num(s.overheadTraceOff)} µs |`);
    out.push(`| \`query()\`, trace on | ${num(s.queryTraceOn.median)} [${num(s.queryTraceOn.min)}–${num(s.queryTraceOn.max)}] | +${num(s.overheadTraceOn)} µs |`);
    out.push("");
  }
  if (results.concurrency) {
    const c = results.concurrency;
    out.push("## 4. Concurrency");
    out.push("");
    out.push(`${num(c.runs, 0)} runs started at once in one process, each ${c.steps} tool steps whose model answers after ${c.modelMs} ms (then an instant final answer), all in one workspace with one shared trace file. Ideal ${num(c.idealMs / 1000, 1)} s, goal ≤ ${c.goalRatio}×: **${num(c.wallMs / 1000, 2)} s (${ratio(c.ratio)})** — ${c.met ? "met" : "missed"}. Peak memory per concurrent run: ${num(c.peakHeapPerRunKB, 1)} KB of heap + external, ${c.peakRssPerRunKB > 0 ? `${num(c.peakRssPerRunKB, 1)} KB of RSS` : "RSS did not rise above its level before the runs (the process kept memory from the earlier sections)"} (peak above the level before the runs, sampled every 10 ms, divided by ${num(c.runs, 0)}).`);
    out.push("");
  }
  if (results.longRun) {
    const l = results.longRun;
    out.push("## 5. Long run");
    out.push("");
    out.push(`${num(l.steps, 0)} steps with the trace on: ${num(l.wallMs / 1000, 2)} s (${num(l.usPerStep)} µs/step), ${num(l.traceLines, 0)} trace lines written, **${num(l.traceLinesPerSecond, 0)} lines/s**. Peak heap + external above the start: ${num(l.peakHeapMB, 1)} MB; after the run and a collection: ${num(l.retainedAfterMB, 2)} MB. Left behind (active resources by type, process listeners by event): ${l.noLeaks ? "nothing" : `\`${JSON.stringify({ ...l.leakedResources, ...l.leakedListeners })}\``}.`);
    out.push("");
  }
  if (results.replay) {
    const r = results.replay;
    out.push("## 6. Replay");
    out.push("");
    if (!r.available) out.push(`n/a: ${r.reason}.`);
    else out.push(`A recorded session of ${num(r.transitions, 0)} trace lines (${num(r.steps, 0)} tool steps) read with \`loadSession\` in ${num(r.loadSeconds.median, 2)} s and replayed through the engine with \`replay\` in **${num(r.replaySeconds.median, 2)} s** (median of ${r.replaySeconds.runs}); replay identical to the recording: ${r.identical ? "yes" : `no (${r.divergence})`}.`);
    out.push("");
  }
  if (results.promoted) {
    const p = results.promoted;
    out.push("## 7. Promoted bytes");
    out.push("");
    out.push(`KB per step the scavenges promote to old space (\`--trace-gc-nvp\`'s \`promoted\`), each layer of \`bench/steps.mjs\` run alone (${num(p.steps, 0)} steps, a warm-up and ${p.runs} runs) in ${p.processes} fresh processes: V8 decides per process which allocation sites to tenure, so the median and the range of the processes are given. "XState changed" loads XState through \`bench/lib/xstate-changes.cjs\`, which makes while it loads the three changes upstream needs that the notes below explain (the function literals \`microstep\` and \`enqueueActions\` assign to a property, and the spread copy \`sendInspectionEvent\` makes of each inspection event); statecraft never runs so.`);
    out.push("");
    out.push("| layer | XState | KB promoted per step (median) | per process | KB allocated per step |");
    out.push("|---|---|---:|---|---:|");
    for (const r of p.rows) out.push(`| ${r.layer === "on" ? "query(), trace on" : "engine machine alone"} | ${r.variant === "published" ? "as published" : "changed"} | ${num(r.medianKB, 2)} | ${r.perProcessKB.map((x) => num(x, 2)).join(", ")} | ${num(r.allocatedKB, 1)} |`);
    out.push("");
  }
  if (notes.trim()) {
    out.push(notes.trim());
    out.push("");
  }
  return `${out.join("\n")}\n`;
}

const HEADLINE_BEGIN = "<!-- bench-headline:begin (generated by npm run bench from bench/results.json; do not edit) -->";
const HEADLINE_END = "<!-- bench-headline:end -->";

/** The README's headline figure, taken from the same results as docs/performance.md. */
export function renderHeadline(results) {
  const on = rowOf(results, "statecraft-on");
  const first = results.loop?.sizes?.[0];
  const at = on?.sizes[first];
  if (!at) return "Headline: not measured yet (`npm run bench`).";
  const peers = ["ai", "openai-agents", "langgraph"]
    .map((id) => rowOf(results, id))
    .filter((p) => p?.sizes[first]?.N === at.N)
    .map((p) => p.sizes[first].median / at.median);
  const spread = peers.length ? `${num(Math.min(...peers), 0)}–${num(Math.max(...peers), 0)}× cheaper per step than ai, @openai/agents and LangGraph` : "";
  const concurrency = results.concurrency ? `; ${num(results.concurrency.runs, 0)} concurrent runs of ${results.concurrency.steps} steps in ${num(results.concurrency.wallMs / 1000, 2)} s` : "";
  return (
    `Headline (from that table, ${results.machine?.cores ?? "?"}-core machine): with tracing on about ${num(at.median, 0)} µs per step at ` +
    `N = ${num(first, 0)}, ${ratio(at.xFloor)} the bare XState graph and ${ratio(at.xPi)} pi-agent-core, ${spread}${concurrency}; ` +
    `the goals not met are listed there with the profile.`
  );
}

/** The README with its headline block replaced (the README must hold the two markers). */
export function withHeadline(readme, results) {
  const start = readme.indexOf(HEADLINE_BEGIN);
  const end = readme.indexOf(HEADLINE_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${HEADLINE_BEGIN} … ${HEADLINE_END} block for the bench headline`);
  return `${readme.slice(0, start + HEADLINE_BEGIN.length)}\n${renderHeadline(results)}\n${readme.slice(end)}`;
}
