// The page draws once per animation frame: records that arrive are queued, then applied together at the next frame
// and drawn once. A busy app reports thousands of events a second; drawing each one would cost the page its frames.

let queued = false;
/** Records received since the last frame: applied together at the next one, then drawn once. */
const incoming = [];
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
    const records = incoming.splice(0);
    for (const r of records) handlers.apply(r);
    handlers.render();
  });
}

/** Records to apply at the next frame. */
export function queueRecords(records) {
  incoming.push(...records);
  scheduleRender();
}

/** The records queued and not yet applied, taken out of the queue. */
export function takeQueued() {
  return incoming.splice(0);
}
