// Chromium's performance trace of an inspector page (CDP Tracing, with V8's sampling profiler), and what it says a
// long frame was: the main thread's tasks during the frame, what each did (the event or callback it ran, style,
// layout, paint, garbage collection), the JS functions the profiler sampled most, and how much of the frame the
// main thread ran at all (the rest it was idle, or waiting for a core on a loaded machine: wall time past CPU time).
// Used by stream.mjs (long frames per run) and profile.mjs (sums per kind of work).

const CATEGORIES = [
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  // Stacks on style and layout work that JS forced (a read of geometry after a write).
  "disabled-by-default-devtools.timeline.stack",
  "toplevel",
  "v8",
  "blink.user_timing",
  "disabled-by-default-v8.cpu_profiler",
].join(",");

/** Starts tracing `page`; `stop()` ends it and resolves to the trace's events. */
export async function startTrace(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Tracing.start", { categories: CATEGORIES, transferMode: "ReturnAsStream" });
  return {
    async stop() {
      const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
      await cdp.send("Tracing.end");
      const { stream } = await complete;
      const chunks = [];
      for (;;) {
        const { data, eof } = await cdp.send("IO.read", { handle: stream });
        chunks.push(data);
        if (eof) break;
      }
      await cdp.send("IO.close", { handle: stream });
      await cdp.detach();
      const parsed = JSON.parse(chunks.join(""));
      return parsed.traceEvents ?? parsed;
    },
  };
}

/** The page's threads: `{ main, worker }` as "pid:tid" (the renderer's main thread, the layout worker). */
export function threadsOf(events) {
  const names = new Map();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args.name);
  // The page's renderer is the one whose main thread ran the page's animation frames.
  const fired = events.find((e) => e.name === "FireAnimationFrame" && names.get(`${e.pid}:${e.tid}`) === "CrRendererMain");
  const main = fired ? `${fired.pid}:${fired.tid}` : [...names].find(([, n]) => n === "CrRendererMain")?.[0];
  const pid = main?.split(":")[0];
  const worker = [...names].find(([key, n]) => n === "DedicatedWorker thread" && key.startsWith(`${pid}:`))?.[0];
  return { names, main, worker };
}

const key = (e) => `${e.pid}:${e.tid}`;
const base = (url) => (url ? String(url).split("/").pop().split("?")[0] : "");
const ms = (us) => Math.round(us / 100) / 10;

/**
 * The offset (µs) from the page's `performance.now()` (ms) to the trace's clock, from a `performance.mark(name)`
 * made in the page at `at` (its `performance.now()`).
 */
export function clockOffset(events, name, at) {
  const mark = events.find((e) => e.name === name && String(e.cat).includes("user_timing"));
  if (!mark) throw new Error(`the trace has no performance.mark("${name}"): was blink.user_timing traced?`);
  return mark.ts - at * 1000;
}

/** The main thread's samples from V8's profiler: `[{ ts, frame: { functionName, url, lineNumber } }]`. */
function samplesOf(events, thread) {
  const profiles = new Map();
  for (const e of events) {
    if (e.name === "Profile" && key(e) === thread) profiles.set(e.id, { time: e.args.data.startTime, nodes: new Map(), samples: [] });
  }
  for (const e of events) {
    const p = e.name === "ProfileChunk" ? profiles.get(e.id) : undefined;
    if (!p) continue;
    const data = e.args.data;
    for (const n of data.cpuProfile?.nodes ?? []) p.nodes.set(n.id, n.callFrame);
    const ids = data.cpuProfile?.samples ?? [];
    const deltas = data.timeDeltas ?? [];
    for (let i = 0; i < ids.length; i++) {
      p.time += deltas[i] ?? 0;
      p.samples.push({ ts: p.time, id: ids[i] });
    }
  }
  const out = [];
  for (const p of profiles.values()) for (const s of p.samples) out.push({ ts: s.ts, frame: p.nodes.get(s.id) });
  return out.sort((a, b) => a.ts - b.ts);
}

/** What a trace event under a task was, in a few words. */
function what(e) {
  const d = e.args?.data ?? {};
  if (e.name === "EventDispatch") return `event ${d.type}`;
  if (e.name === "FunctionCall") return `call ${d.functionName || "(anonymous)"} ${base(d.url)}:${(d.lineNumber ?? 0) + 1}`;
  if (e.name === "TimerFire") return "timer";
  if (e.name === "FireAnimationFrame") return "animation frame";
  if (e.name === "HandlePostMessage") return "postMessage";
  return e.name;
}

const RENDERING = new Set(["UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit", "UpdateLayer", "PaintImage", "HitTest"]);
const GC = new Set(["MinorGC", "MajorGC", "V8.GC_SCAVENGER", "V8.GC_MARK_COMPACTOR", "BlinkGC.AtomicPhase"]);
const ENTRY = new Set(["EventDispatch", "FunctionCall", "TimerFire", "FireAnimationFrame", "HandlePostMessage", "ParseHTML", "EvaluateScript", "v8.compile", "V8.ScriptCompiler"]);

/**
 * What the trace says each frame of `frames` longer than `threshold` ms was. `frames` are the times (the page's
 * `performance.now()`, ms) of consecutive animation frames; `offset` from clockOffset.
 */
export function explainLongFrames(events, frames, offset, threshold = 50) {
  const { main } = threadsOf(events);
  const onMain = events.filter((e) => e.ph === "X" && key(e) === main).sort((a, b) => a.ts - b.ts);
  // The outermost tasks (a task's trace event may be nested in another of the same task under a second name).
  const tasks = [];
  for (const e of onMain) {
    if (e.name !== "RunTask" && e.name !== "ThreadControllerImpl::RunTask") continue;
    const last = tasks[tasks.length - 1];
    if (last && e.ts >= last.ts && e.ts + (e.dur ?? 0) <= last.ts + last.dur) continue;
    tasks.push(e);
  }
  const samples = samplesOf(events, main);
  const out = [];
  for (let i = 1; i < frames.length; i++) {
    const length = frames[i] - frames[i - 1];
    if (length <= threshold) continue;
    const from = frames[i - 1] * 1000 + offset;
    const to = frames[i] * 1000 + offset;
    const overlapping = tasks.filter((t) => t.ts < to && t.ts + (t.dur ?? 0) > from && (t.dur ?? 0) >= 2000);
    let busy = 0;
    const described = overlapping.map((t) => {
      busy += Math.min(to, t.ts + t.dur) - Math.max(from, t.ts);
      const inside = onMain.filter((e) => e !== t && e.ts >= t.ts && e.ts + (e.dur ?? 0) <= t.ts + t.dur);
      // The outermost entries into the page's code (a message event, the animation frame, a timer, a script).
      const entries = inside.filter((e) => ENTRY.has(e.name)).filter((e, _, all) => !all.some((o) => o !== e && ENTRY.has(o.name) && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && (o.ts < e.ts || o.dur > e.dur)));
      const counts = new Map();
      for (const e of entries) {
        const w = what(e);
        const c = counts.get(w) ?? { n: 0, us: 0 };
        c.n++;
        c.us += e.dur ?? 0;
        counts.set(w, c);
      }
      const sum = (set) => inside.filter((e) => set.has(e.name)).reduce((a, e) => a + (e.dur ?? 0), 0);
      return {
        ms: ms(t.dur),
        cpuMs: ms(t.tdur ?? 0),
        ran: [...counts].sort((a, b) => b[1].us - a[1].us).slice(0, 4).map(([w, c]) => `${w}${c.n > 1 ? ` ×${c.n}` : ""} ${ms(c.us)} ms`),
        renderingMs: ms(sum(RENDERING)),
        gcMs: ms(sum(GC)),
      };
    });
    // The functions the profiler caught running most during the frame (self time, by sample count). Samples fall
    // on wall time: on a loaded machine, time spent waiting for a core counts for whatever was running.
    const hot = new Map();
    let sampled = 0;
    for (const s of samples) {
      if (s.ts < from || s.ts >= to || !s.frame) continue;
      const f = s.frame;
      if (f.functionName === "(idle)") continue;
      sampled++;
      const name = f.url ? `${f.functionName || "(anonymous)"} ${base(f.url)}:${f.lineNumber + 1}` : f.functionName;
      hot.set(name, (hot.get(name) ?? 0) + 1);
    }
    // CPU counted only for the part of each task inside the frame.
    const cpuIn = overlapping.reduce((sum, t) => sum + (t.tdur ?? 0) * ((Math.min(to, t.ts + t.dur) - Math.max(from, t.ts)) / Math.max(1, t.dur)), 0);
    out.push({
      frame: i,
      ms: Math.round(length),
      mainThreadBusyMs: ms(busy),
      mainThreadCpuMs: ms(cpuIn),
      // Busy but not running: the thread had work and no core to run it on.
      verdict: busy / 1000 < length / 2 ? "main thread mostly idle (the compositor or the GPU process, or no core for them)" : cpuIn < busy / 2 ? "main thread waited for a core most of the frame" : "main thread busy running the page",
      tasks: described.filter((t) => t.ms >= 5),
      hot: [...hot].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([name, n]) => `${name} ${Math.round((100 * n) / sampled)}%`),
    });
  }
  return out;
}

/**
 * The CPU time (ms) the page's main thread spent in each frame of `frames` (a task across two frames counted in
 * each by its part of the wall time), and the CPU of its main thread and layout worker from the first frame to the
 * last. A frame whose main thread used little CPU but took long waited: for a core, on a loaded machine.
 */
export function frameCpu(events, frames, offset) {
  const { main, worker } = threadsOf(events);
  const from = frames[0] * 1000 + offset;
  const to = frames[frames.length - 1] * 1000 + offset;
  const top = (thread) => {
    const out = [];
    for (const e of events) {
      if (e.ph !== "X" || key(e) !== thread || (e.name !== "RunTask" && e.name !== "ThreadControllerImpl::RunTask")) continue;
      out.push(e);
    }
    out.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    return out.filter((e, i) => !out.slice(Math.max(0, i - 3), i).some((o) => e.ts >= o.ts && e.ts + e.dur <= o.ts + o.dur));
  };
  const mainTasks = top(main);
  const perFrame = [];
  let t = 0;
  for (let i = 1; i < frames.length; i++) {
    const a = frames[i - 1] * 1000 + offset;
    const b = frames[i] * 1000 + offset;
    while (t < mainTasks.length && mainTasks[t].ts + mainTasks[t].dur < a) t++;
    let cpu = 0;
    for (let j = t; j < mainTasks.length && mainTasks[j].ts < b; j++) {
      const e = mainTasks[j];
      const part = (Math.min(b, e.ts + e.dur) - Math.max(a, e.ts)) / Math.max(1, e.dur);
      if (part > 0) cpu += (e.tdur ?? 0) * part;
    }
    perFrame.push(cpu / 1000);
  }
  const within = (tasks) => tasks.filter((e) => e.ts >= from && e.ts <= to).reduce((sum, e) => sum + (e.tdur ?? 0), 0) / 1000;
  return { perFrame, mainCpuMs: Math.round(within(mainTasks)), workerCpuMs: worker ? Math.round(within(top(worker))) : 0 };
}

/** Wall and CPU time (ms) of the page's threads, per kind of work (profile.mjs). */
export function sumsByKind(events) {
  const { main, worker } = threadsOf(events);
  const sums = {};
  for (const e of events) {
    const thread = key(e) === main ? "main" : key(e) === worker ? "worker" : undefined;
    if (e.ph !== "X" || !thread) continue;
    if (!["RunTask", "FireAnimationFrame", "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Commit", "HandlePostMessage", "EventDispatch"].includes(e.name)) continue;
    const k = `${thread} ${e.name}`;
    sums[k] ??= { wallMs: 0, cpuMs: 0 };
    sums[k].wallMs += (e.dur ?? 0) / 1000;
    sums[k].cpuMs += (e.tdur ?? 0) / 1000;
  }
  for (const v of Object.values(sums)) {
    v.wallMs = Math.round(v.wallMs);
    v.cpuMs = Math.round(v.cpuMs);
  }
  return sums;
}
