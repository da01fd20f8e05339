// The WebSocket to the server that served the page: the hello, the replay of the records kept, then the records as
// they come (applied a few milliseconds at a time between frames, frame.js); reconnects with a growing delay, and starts afresh on each hello.

import { $, textElement } from "./dom.js";
import { queueRecords, scheduleRender, takeQueued } from "./frame.js";
import { applyRecord } from "./records.js";
import { addProblem, live, model, rendered } from "./state.js";
import { loadGivenTrace } from "./traces.js";

let reconnectDelay = 500;
/** Between the server's hello and its replay (the first `records` message). */
let awaitingReplay = false;

export function connect() {
  const ws = new WebSocket(`ws://${location.host}/`);
  live.socket = ws;
  setConnection("connecting", "connecting…");
  ws.addEventListener("open", () => {
    reconnectDelay = 500;
    ws.send(JSON.stringify({ type: "@statecraft.hello" }));
  });
  ws.addEventListener("message", (message) => {
    let data;
    try {
      data = JSON.parse(message.data);
    } catch {
      addProblem("the server sent a message that is not JSON");
      return;
    }
    if (data.type === "hello") {
      // A reconnect replays everything: start the server's part afresh, keep the trace files opened here.
      for (const [key, s] of model.sessions) if (s.kind !== "trace") model.sessions.delete(key);
      model.charts.clear();
      model.permissions.clear();
      model.problems = model.problems.filter((p) => p.origin !== "server");
      rendered.problems = -1;
      model.defaultChartId = data.defaultChartId;
      model.traceFileName = data.traceFile;
      model.events = [];
      model.selectedEvent = undefined;
      takeQueued();
      awaitingReplay = true;
      const origins = Array.isArray(data.allowOrigins) ? data.allowOrigins : [];
      const allowed = $("allowed-origins");
      allowed.hidden = origins.length === 0;
      allowed.replaceChildren(...origins.map((o) => textElement("li", o)));
      live.answering = undefined;
      // Reconnected to another inspector on the same port: this page holds the previous one's token.
      if (!live.staleToken && live.serverInstance !== undefined && data.instance !== live.serverInstance) {
        live.staleToken = true;
        addProblem("the inspector on this port was restarted: reload this page to answer permission requests (it holds the previous inspector's token)");
      }
      live.serverInstance ??= data.instance;
      live.connected = true;
      setConnection("connected", "connected");
      rendered.chartId = undefined;
      rendered.timelineKey = undefined;
      return;
    }
    // Streamed records are queued and applied in slices between frames (frame.js). The first records after hello
    // are the replay: applied at once (the given trace is loaded after it). Later ones are records the server sent
    // together; they join the queue behind the rest.
    if (data.type === "records" && !awaitingReplay) {
      queueRecords(data.records);
      return;
    }
    if (data.type === "records") {
      awaitingReplay = false;
      for (const r of takeQueued()) applyRecord(r);
      for (const r of data.records) applyRecord(r);
      loadGivenTrace();
      scheduleRender();
      return;
    }
    if (data.type === "record") queueRecords([data.record]);
  });
  ws.addEventListener("close", () => {
    live.connected = false;
    setConnection("disconnected", "disconnected — retrying");
    scheduleRender();
    setTimeout(connect, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 5000);
  });
}

function setConnection(state, text) {
  const el = $("connection");
  el.dataset.connection = state;
  el.textContent = text;
}
