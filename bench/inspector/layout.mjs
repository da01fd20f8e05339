// `node bench/inspector/layout.mjs`: how long ELK takes to lay out the inspector's chart of a 200-state machine,
// through the same graph the page builds (chart-graph.js), in Node (the page runs the same in a Web Worker).
// The inspector promises under 2 s on this machine: this is where that goal is measured (prints goalMet). The browser
// test test/e2e/inspect-layout.test.ts checks that the page lays it out off the main thread, every state drawn.
import ELK from "elkjs/lib/elk.bundled.js";
import { machineChart } from "../../dist/inspect/chart.js";
import { elkGraph } from "../../dist/inspect/page/chart-graph.js";
import { bigMachine } from "./big-machine.mjs";

const chart = machineChart(bigMachine());
const { markers, ...graph } = elkGraph(chart, (text) => String(text).length * 6.5);
const elk = new ELK();
const times = [];
for (let i = 0; i < 5; i++) {
  const started = performance.now();
  await elk.layout(structuredClone(graph));
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ states: chart.states.length, arrows: chart.arrows, markers: markers.length, runsMs: times.map(Math.round), medianMs: Math.round(times[2]), goalMs: 2000, goalMet: times[2] < 2000 }));
