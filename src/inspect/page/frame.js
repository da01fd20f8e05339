// Records that arrive are applied in small tasks between frames, a few milliseconds at a time, and the page is drawn
// once per animation frame from what has been applied. A busy app reports thousands of events a second: drawing each
// one would cost the page its frames, and applying all that came since the last frame inside the frame makes a slow
// frame slower still (more records pile up behind it for the next one).

/** How long one task may apply records before it yields to the browser (input, the next frame). */
const SLICE_MS = 4;

let queued = false;
/** Records received and not yet applied, from `head` on (a head index: shifting a long array costs its length). */
let incoming = [];
let head = 0;
let draining = false;
let handlers = { apply: () => {}, render: () => {} };

/** `apply(record)` applies one record to the model, `render()` draws the page from it. */
export function onFrame(apply, render) {
  handlers = { apply, render };
}

export function scheduleRender() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    handlers.render();
  });
}

// A message to itself is a task of its own without setTimeout's clamping of nested timers to 4 ms.
const channel = new MessageChannel();
channel.port1.onmessage = drain;

function drain() {
  draining = false;
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
