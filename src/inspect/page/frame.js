// Records that arrive are applied in small tasks between frames, a few milliseconds at a time, and the page is drawn
// once per animation frame from what has been applied. A busy app reports thousands of events a second: drawing each
// one would cost the page its frames, and applying all that came since the last frame inside the frame makes a slow
// frame slower still (more records pile up behind it for the next one).

/** How long one task may apply records before it yields to the browser (input, the next frame). */
const SLICE_MS = 4;
/**
 * Past this long since the last frame, a frame is due: records wait for it rather than run slice after slice ahead
 * of it (the browser does not always give a due frame precedence over tasks already queued).
 */
const FRAME_DUE_MS = 12;

let queued = false;
/** Records received and not yet applied, from `head` on (a head index: shifting a long array costs its length). */
let incoming = [];
let head = 0;
let draining = false;
/** Draining stopped for a due frame: the frame starts it again. */
let afterFrame = false;
let lastFrame = performance.now();
let handlers = { apply: () => {}, render: () => {} };

/** `apply(record)` applies one record to the model, `render()` draws the page from it. */
export function onFrame(apply, render) {
  handlers = { apply, render };
}

/** How many times a frame was asked for: a frame drawn in halves (app.js) tells from it what changed meanwhile. */
let requests = 0;

export const renderRequests = () => requests;

export function scheduleRender() {
  requests++;
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    handlers.render();
    // From the end of the frame: a long frame leaves the records their time before the next.
    lastFrame = performance.now();
    if (afterFrame) {
      afterFrame = false;
      channel.port2.postMessage(null);
    }
  });
}

// A message to itself is a task of its own without setTimeout's clamping of nested timers to 4 ms.
const channel = new MessageChannel();
channel.port1.onmessage = drain;

function drain() {
  draining = false;
  // A hidden page gets no frames: it applies the records as they come.
  if (queued && !document.hidden && performance.now() - lastFrame > FRAME_DUE_MS) {
    draining = afterFrame = true;
    return;
  }
  const until = performance.now() + SLICE_MS;
  let applied = 0;
  while (head < incoming.length) {
    handlers.apply(incoming[head++]);
    // The clock is read every few records: reading it costs about as much as a small record.
    if (++applied % 16 === 0 && performance.now() >= until) break;
  }
  if (head >= incoming.length) {
    incoming = [];
    head = 0;
  } else {
    draining = true;
    channel.port2.postMessage(null);
  }
  if (applied > 0) scheduleRender();
}

/** Records to apply, in order, after those already waiting. */
export function queueRecords(records) {
  for (const r of records) incoming.push(r);
  if (draining) return;
  draining = true;
  channel.port2.postMessage(null);
}

/** The records queued and not yet applied, taken out of the queue. */
export function takeQueued() {
  const rest = incoming.slice(head);
  incoming = [];
  head = 0;
  return rest;
}
