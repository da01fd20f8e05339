// The selected step in detail: what led there, the context at that point, the conversation so far, the counters,
// the calls of the response, errors and what happened during it.

import { $, block, formatMs, formatTime, safeParse, textElement } from "./dom.js";
import { morph } from "./morph.js";
import { model, rendered } from "./state.js";

export function renderSelected(s) {
  const out = $("selected");
  const panel = $("inspect");
  const entry = s && model.selectedIndex >= 0 ? s.entries[model.selectedIndex] : undefined;
  if (!entry) {
    out.textContent = s ? "no transition yet" : "nothing selected";
    out.removeAttribute("data-seq");
    out.removeAttribute("data-selected-state");
    panel.replaceChildren();
    rendered.inspectKey = undefined;
    return;
  }
  const name = entry.names.join(", ");
  out.textContent = `seq ${entry.seq} · ${name}${entry.turn !== undefined ? ` · turn ${entry.turn}` : ""} · ${formatTime(entry.time)}`;
  out.dataset.seq = String(entry.seq);
  out.dataset.selectedState = name;
  const key = `${s.key}|${entry.index}|${s.version}`;
  if (rendered.inspectKey === key) return;
  rendered.inspectKey = key;
  morph(panel, inspectParts(s, entry));
}

/** What the selected transition shows: what led there, the context at that point, what happened during it. */
function inspectParts(s, entry) {
  const parts = [];
  const heading = textElement("h2", `#${entry.seq} ${entry.names.join(", ")}`);
  parts.push(heading);
  const facts = [];
  facts.push(["time", `${formatTime(entry.time)}`]);
  if (entry.turn !== undefined) facts.push(["turn", String(entry.turn)]);
  if (entry.event) facts.push(["event", entry.event]);
  if (s.kind === "actor" && entry.status) facts.push(["status", entry.status]);
  if (s.kind === "actor" && s.endReason && entry.index === s.entries.length - 1) facts.push(["ended", s.endReason]);
  const counters = countersAt(s, entry.index);
  if (counters) {
    facts.push(["turns", `${counters.turns}${counters.maxTurns !== undefined ? ` / ${counters.maxTurns}` : ""}`]);
    facts.push(["tool calls", `${counters.toolCalls}${counters.maxToolCalls !== undefined ? ` / ${counters.maxToolCalls}` : ""}`]);
    if (counters.elapsedMs !== undefined) facts.push(["elapsed", `${formatMs(counters.elapsedMs)}${counters.timeoutMs !== undefined ? ` / ${formatMs(counters.timeoutMs)}` : ""}`]);
  }
  const dl = document.createElement("dl");
  dl.className = "facts";
  for (const [k, v] of facts) dl.append(textElement("dt", k), textElement("dd", v));
  parts.push(dl);

  const errors = errorsOf(entry);
  if (errors.length) parts.push(block("errors", errors, "errors"));
  if (s.kind !== "actor" && entry.details && Object.keys(entry.details).length) parts.push(block("what led here (trace details)", entry.details));
  if (s.kind === "actor" && entry.details && entry.details.event) parts.push(block("event", entry.details.event));
  if (s.kind === "actor" && entry.details && entry.details.output !== undefined) parts.push(block("output", entry.details.output));

  const batch = entry.context && Array.isArray(entry.context.batch) ? entry.context.batch : undefined;
  if (batch && batch.length) {
    parts.push(
      block(
        "calls of this response",
        batch.map((r) => ({ call: r.call, status: r.status, ...(r.permission ? { permission: r.permission } : {}), ...(r.result ? { result: r.result } : {}), ...(r.error ? { error: r.error } : {}) })),
      ),
    );
  }
  if (s.kind !== "actor") {
    const messages = messagesAt(s, entry.index);
    const section = document.createElement("section");
    section.className = "messages";
    section.append(textElement("h3", `messages so far (${messages.length})`));
    const ol = document.createElement("ol");
    for (const m of messages) {
      const li = document.createElement("li");
      li.dataset.role = m.role;
      li.append(textElement("span", m.role + (m.name ? ` ${m.name}` : ""), "role"));
      if (m.content) li.append(textElement("pre", m.content, "text"));
      if (m.toolCalls && m.toolCalls.length) li.append(textElement("pre", m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join("\n"), "json"));
      if (m.isError) li.dataset.error = "";
      ol.append(li);
    }
    section.append(ol);
    parts.push(section);
  }
  const notes = s.notes.filter((n) => n.at === entry.index);
  if (notes.length) {
    parts.push(
      block(
        "during this state",
        notes.map((n) => (n.kind === "line" ? n.line : n.kind === "event" ? { received: n.event, ...(n.sourceId ? { from: n.sourceId } : {}) } : n.event)),
      ),
    );
  }
  if (entry.context !== undefined) {
    const details = document.createElement("details");
    details.className = "context";
    if (s.kind === "actor") details.open = true;
    details.append(textElement("summary", "context at this point"), textElement("pre", JSON.stringify(entry.context, null, 2), "json"));
    parts.push(details);
  }
  return parts;
}

function errorsOf(entry) {
  const out = [];
  const d = entry.details || {};
  if (d.error) out.push(d.error);
  if (Array.isArray(d.errors)) out.push(...d.errors);
  for (const r of (d.results || [])) if (r.error) out.push({ toolCallId: r.toolCallId, ...r.error });
  const c = entry.context || {};
  if (c.failure && !out.length) out.push(c.failure);
  if (c.stopError && !out.some((e) => e.code === c.stopError.code)) out.push(c.stopError);
  if (entry.status === "error" && c) out.push({ message: "the actor failed" });
  return out;
}

/** The conversation as it stood when the transition happened: the run's own, or rebuilt from a trace's details. */
function messagesAt(s, index) {
  const entry = s.entries[index];
  if (s.kind === "run" && entry.messageCount !== undefined) {
    return s.messages.slice(0, entry.messageCount).map((m) => ({
      role: m.role,
      content: m.content,
      name: m.name,
      isError: m.isError,
      toolCalls: m.toolCalls,
    }));
  }
  const out = [];
  for (let i = 0; i <= index; i++) {
    const d = s.entries[i].details || {};
    if (typeof d.input === "string") out.push({ role: "user", content: d.input });
    if (d.response) out.push({ role: "assistant", content: d.response.text || "", toolCalls: (d.response.toolCalls || []).map((c) => ({ name: c.name, input: safeParse(c.arguments) })) });
    for (const r of d.results || []) out.push({ role: "tool", name: r.name, content: r.content, isError: r.isError });
  }
  return out;
}

/** turns, tool calls and elapsed time at a transition, with their limits when known. */
export function countersAt(s, index) {
  if (s.kind === "actor") return undefined;
  const entry = s.entries[index];
  const ctx = entry.context;
  const first = s.entries[0];
  const options = (first && first.details && first.details.options) || {};
  if (ctx && typeof ctx === "object" && typeof ctx.turn === "number") {
    const live = !s.ended && model.follow && index === s.entries.length - 1;
    const at = live ? Date.now() : Date.parse(entry.time);
    // The engine keeps a run's fixed settings under `run`.
    const run = ctx.run && typeof ctx.run === "object" ? ctx.run : ctx;
    return {
      turns: ctx.turn,
      maxTurns: run.maxTurns,
      toolCalls: ctx.toolCallCount ?? 0,
      maxToolCalls: run.maxToolCalls,
      elapsedMs: typeof run.startedAt === "number" ? Math.max(0, at - run.startedAt) : undefined,
      timeoutMs: run.timeoutMs,
    };
  }
  let toolCalls = 0;
  for (let i = 0; i <= index; i++) {
    const d = s.entries[i].details || {};
    if (Array.isArray(d.run)) toolCalls += d.run.length;
    if (typeof d.toolCalls === "number") toolCalls = d.toolCalls;
  }
  const startedAt = first ? Date.parse(first.time) : NaN;
  const live = s.kind === "run" && !s.ended && model.follow && index === s.entries.length - 1;
  const at = live ? Date.now() : Date.parse(entry.time);
  return {
    turns: entry.turn ?? 0,
    maxTurns: options.maxTurns,
    toolCalls,
    maxToolCalls: options.maxToolCalls,
    elapsedMs: Number.isFinite(startedAt) && Number.isFinite(at) ? Math.max(0, at - startedAt) : undefined,
    timeoutMs: options.timeoutMs,
  };
}
