// The side of the page: the gauges (turns, tool calls, time against their limits), the streamed output, the tool
// calls, the pending permission request with its Allow / Deny, and the problems.

import { $, formatMs, formatTime, textElement } from "./dom.js";
import { countersAt } from "./selected.js";
import { live, model, PAGE_TOKEN, rendered, viewOf } from "./state.js";

export function renderGauges(s) {
  const section = $("gauges");
  const entry = s && model.selectedIndex >= 0 ? s.entries[model.selectedIndex] : undefined;
  section.hidden = !!s && s.kind === "actor";
  const counters = s && entry ? countersAt(s, entry.index) : undefined;
  const view = s ? viewOf(s) : model.charts.get(model.defaultChartId);
  setGauge("gauge-turns", "turns-value", counters && counters.turns, counters && counters.maxTurns, String);
  setGauge("gauge-tools", "tools-value", counters && counters.toolCalls, counters && counters.maxToolCalls, String);
  setGauge("gauge-time", "time-value", counters && counters.elapsedMs, counters && counters.timeoutMs, formatMs);
  const guards = view ? guardsByGauge(view.chart) : { turns: [], tools: [], time: [] };
  $("turns-guards").textContent = guards.turns.length ? `guards: ${guards.turns.join(", ")}` : "";
  $("tools-guards").textContent = guards.tools.length ? `guards: ${guards.tools.join(", ")}` : "";
  $("time-guards").textContent = guards.time.length ? `guards: ${guards.time.join(", ")}` : "";
}

function setGauge(meterId, valueId, value, max, format) {
  const meter = $(meterId);
  const has = typeof value === "number" && Number.isFinite(value);
  const limit = typeof max === "number" && max > 0 ? max : has ? Math.max(value, 1) : 1;
  meter.max = limit;
  meter.value = has ? Math.min(value, limit) : 0;
  meter.high = limit * 0.8;
  meter.optimum = 0;
  const text = has ? `${format(value)}${typeof max === "number" ? ` / ${format(max)}` : ""}` : "–";
  meter.setAttribute("aria-valuetext", text);
  meter.setAttribute("title", text);
  $(valueId).textContent = text;
}

/** The guards (and named delays) each gauge's counter feeds, by name: shown next to the gauge. */
function guardsByGauge(chart) {
  const names = new Set();
  for (const g of chart.guards) for (const part of g.split(/\s*(?:&&|\|\|)\s*/)) names.add(part.replace(/^!/, ""));
  const delays = chart.edges.filter((e) => e.kind === "after" && typeof e.delay === "string").map((e) => `after ${e.delay}`);
  const all = [...names, ...new Set(delays)];
  return {
    turns: all.filter((n) => /turn/i.test(n)),
    tools: all.filter((n) => /tool.?(call|limit)/i.test(n)),
    time: all.filter((n) => /time|deadline/i.test(n)),
  };
}

/** The text the model streamed up to the selected transition. */
export function renderOutput(s) {
  const out = $("output");
  let text = "";
  if (s && s.kind !== "actor" && model.selectedIndex >= 0) {
    const streamed = s.notes.filter((n) => n.kind === "agent" && n.event.type === "text_delta" && n.at <= model.selectedIndex);
    if (streamed.length) text = streamed.map((n) => n.event.text).join("");
    else {
      const texts = [];
      for (let i = 0; i <= model.selectedIndex; i++) {
        const d = s.entries[i].details || {};
        if (d.response && d.response.text) texts.push(d.response.text);
      }
      text = texts.join("\n\n");
    }
  }
  if (out.textContent !== text) {
    out.textContent = text;
    out.scrollTop = out.scrollHeight;
  }
}

/** Tool calls up to the selected transition: name, arguments, permission, result. */
export function renderCalls(s) {
  const list = $("calls");
  const calls = new Map();
  const call = (id, name) => {
    if (!calls.has(id)) calls.set(id, { id, name, input: undefined, status: "requested" });
    const c = calls.get(id);
    if (name && !c.name) c.name = name;
    return c;
  };
  if (s && s.kind !== "actor") {
    for (let i = 0; i <= model.selectedIndex && i < s.entries.length; i++) {
      const d = s.entries[i].details || {};
      if (Array.isArray(d.calls)) for (const c of d.calls) if (c && typeof c === "object") Object.assign(call(c.id, c.name), { input: c.input });
      for (const p of d.permissions || []) Object.assign(call(p.toolCallId, p.name), { permission: `${p.decision} by ${p.by}` });
      for (const r of d.results || []) Object.assign(call(r.toolCallId, r.name), { result: r.content, isError: r.isError, status: r.isError ? "error" : "done" });
      for (const n of s.notes) {
        if (n.at !== i || n.kind !== "agent") continue;
        const e = n.event;
        if (e.type === "tool_start") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, status: "running" });
        if (e.type === "tool_result") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, result: e.result.content, isError: e.result.isError, status: e.result.isError ? "error" : "done" });
        if (e.type === "permission_request") Object.assign(call(e.call.id, e.call.name), { input: e.call.input, permission: "asked" });
      }
    }
  }
  const items = [...calls.values()].map((c) => {
    const li = document.createElement("li");
    li.dataset.call = c.name || "";
    li.dataset.status = c.status;
    li.append(textElement("strong", c.name || c.id, "call-name"), textElement("span", c.status + (c.permission ? ` · ${c.permission}` : ""), "call-status"));
    if (c.input !== undefined) li.append(textElement("pre", JSON.stringify(c.input, null, 2), "json call-input"));
    if (c.result !== undefined) li.append(textElement("pre", c.result, c.isError ? "text call-result error" : "text call-result"));
    return li;
  });
  const signature = JSON.stringify([...calls.values()]);
  if (list.dataset.signature !== signature) {
    list.dataset.signature = signature;
    list.replaceChildren(...items);
  }
}

export function renderPermission() {
  const all = [...model.permissions.values()];
  const pending = all.filter((p) => !p.answer);
  const section = $("permission");
  renderAnsweredElsewhere(all.filter((p) => p.answer).pop());
  if (pending.length === 0) {
    section.hidden = true;
    section.dataset.request = "";
    return;
  }
  const p = pending[0];
  section.hidden = false;
  // Only what the page shows whole may be allowed from it: the server sends a call cut only when it is too large,
  // and then refuses an Allow from the page too.
  const whole = p.whole === true;
  if (section.dataset.request !== p.id) {
    section.dataset.request = p.id;
    const call = p.call || {};
    const input = JSON.stringify(call.input, null, 2) ?? "";
    $("permission-text").textContent = `${call.name || "a tool"} wants to run (${p.reason}) · session ${String(p.sessionId).slice(0, 8)}`;
    $("permission-input").textContent = input;
    $("permission-input").scrollTop = 0;
    const note = $("permission-note");
    note.dataset.kind = whole ? (input.length > LONG_INPUT ? "long" : "") : "cut";
    if (!whole) note.textContent = `Allow is off: ${p.unshown || "this page was not sent the whole call"}. Deny it here, or answer it in the terminal.`;
    else if (input.length > LONG_INPUT) note.textContent = `The input is ${input.length.toLocaleString("en")} characters long: scroll through all of it before you allow it.`;
    else note.textContent = "";
  }
  $("permission-more").textContent = pending.length > 1 ? `${pending.length - 1} more waiting` : "";
  const busy = !live.connected || live.staleToken || live.answering === p.id;
  $("allow").disabled = busy || !whole;
  $("deny").disabled = busy;
}

/**
 * The last request answered, when the run's own prompt (the terminal) answered it before a page did: said, so that a
 * question that vanished from the page is not taken for a lost one.
 */
function renderAnsweredElsewhere(last) {
  const box = $("permission-elsewhere");
  const text = last && last.by === "elsewhere" ? `${(last.call && last.call.name) || "a tool"}: answered in the terminal before this page did` : "";
  if (box.textContent !== text) box.textContent = text;
  box.hidden = text === "";
}

/** Inputs longer than this get a note saying to read all of them (the box scrolls). */
const LONG_INPUT = 2000;

export function answer(value) {
  const id = $("permission").dataset.request;
  if (!id || !live.connected) return;
  const p = model.permissions.get(id);
  if (value === "allow" && !(p && p.whole === true)) return;
  live.answering = id;
  $("allow").disabled = true;
  $("deny").disabled = true;
  live.socket.send(JSON.stringify({ type: "@statecraft.answer", id, answer: value, token: PAGE_TOKEN }));
}

export function renderProblems() {
  const box = $("problems");
  if (model.problems.length === rendered.problems) return;
  rendered.problems = model.problems.length;
  box.hidden = model.problems.length === 0;
  const list = document.createElement("ul");
  list.setAttribute("aria-label", "problems");
  list.append(...model.problems.slice(-5).map((p) => textElement("li", `${formatTime(p.time)} ${p.message}`)));
  box.replaceChildren(textElement("strong", `${model.problems.length} problem${model.problems.length === 1 ? "" : "s"}${model.problems.length > 5 ? " (the last 5)" : ""}`), list);
}
