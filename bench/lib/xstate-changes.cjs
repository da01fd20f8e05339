// A diagnosis preload, never how statecraft runs: `node --require ./bench/lib/xstate-changes.cjs …` loads XState with
// the three changes it needs for a step's garbage to die young (bench/notes.md, "Promoted bytes: the cause"):
// - the function literals `microstep` and `resolveEnqueueActions` assign straight to a property are wrapped as
//   `(0, fn)`. V8's parser allocates a function literal assigned to a property (`obj.f = () => …`, meant for
//   `Foo.prototype.f = function …`) directly in old space when unoptimised code creates it. XState does that for every
//   microstep (`actorScope.actionExecutor = action => …`) and every `enqueueActions` (`enqueue.assign = …` and seven
//   more), so each such closure keeps its scope (the microstep's actions, the enqueued actions, their snapshot and
//   event) alive past every scavenge until a mark-compact; V8 reads that as "all of it survives", tenures XState's
//   per-microstep allocation sites, and from then on a step's garbage is made in old space. `(0, fn)` is the same
//   function, not a literal assigned to a property, so V8 allocates it young;
// - `sendInspectionEvent`'s `{ ...event, rootId }` becomes `Object.assign({}, event, { rootId })` (below).
// bench/promoted.mjs and the bench's promoted section use it to measure what the upstream changes would give.
"use strict";
const { readFileSync } = require("node:fs");
const Module = require("node:module");

/** Which of XState's functions to change, and how many property-assigned function literals each must have. */
const EXPECTED = { microstep: 1, resolveEnqueueActions: 8 };
/** Per function, how many literals were wrapped in each copy of XState loaded (bench/ has a second copy). */
const found = Object.fromEntries(Object.keys(EXPECTED).map((name) => [name, []]));

/** Index just past the brace that closes the one at `open`, skipping strings, templates and comments. */
function closingBrace(source, open) {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === "/" && source[i + 1] === "/") i = source.indexOf("\n", i);
    else if (c === "/" && source[i + 1] === "*") i = source.indexOf("*/", i) + 1;
    else if (c === '"' || c === "'" || c === "`") {
      for (i++; source[i] !== c; i++) if (source[i] === "\\") i++;
    } else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  throw new Error(`xstate-changes: unbalanced braces from offset ${open}`);
}

// `target.name = (args) => {`, `target.name = arg => {` or `target.name = function name(…) {` at a statement's start.
const ASSIGNED_LITERAL = /\n(\s*)([\w$]+(?:\.[\w$]+)+) = ((?:\([^()]*\)|[\w$]+) => \{|function\b[^{]*\{)/g;

function wrapLiterals(source, name) {
  const start = source.indexOf(`\nfunction ${name}(`);
  if (start < 0) return source;
  const end = closingBrace(source, source.indexOf("{", source.indexOf(")", start)));
  let body = source.slice(start, end);
  let out = "";
  let from = 0;
  let wrapped = 0;
  for (const match of body.matchAll(ASSIGNED_LITERAL)) {
    if (match.index < from) continue;
    const rhs = match.index + match[0].length - match[3].length;
    const close = closingBrace(body, match.index + match[0].length - 1);
    out += `${body.slice(from, rhs)}(0, ${body.slice(rhs, close)})`;
    from = close;
    wrapped++;
  }
  found[name].push(wrapped);
  body = out + body.slice(from);
  return source.slice(0, start) + body + source.slice(end);
}

// `sendInspectionEvent` copies each inspection event with the root's id added: a spread copy given a property its
// source lacks, which V8 keeps past the scavenges like the closures above (bench/v8-promotes.mjs, "spread").
const INSPECTION_COPY = "const resolvedInspectionEvent = {\n      ...event,\n      rootId: rootActor.sessionId\n    };";
const INSPECTION_ASSIGN = "const resolvedInspectionEvent = Object.assign({}, event, { rootId: rootActor.sessionId });";
const inspectionCopies = [];

const load = Module._extensions[".js"];
Module._extensions[".js"] = function loadXState(module, filename) {
  if (!/[/\\]xstate[/\\]dist[/\\][^/\\]+\.cjs\.js$/.test(filename)) return load.call(this, module, filename);
  let source = readFileSync(filename, "utf8");
  for (const name of Object.keys(EXPECTED)) source = wrapLiterals(source, name);
  if (source.includes("function createSystem(")) {
    inspectionCopies.push(source.split(INSPECTION_COPY).length - 1);
    source = source.replace(INSPECTION_COPY, INSPECTION_ASSIGN);
  }
  module._compile(source, filename);
};

// A copy of XState whose code moved must not be measured as if it had been changed: say so and fail.
process.on("exit", (code) => {
  const wrong = Object.entries(EXPECTED).filter(([name, count]) => found[name].length === 0 || found[name].some((n) => n !== count));
  if (inspectionCopies.length === 0 || inspectionCopies.some((n) => n !== 1)) wrong.push(["sendInspectionEvent's copy", 1]);
  if (wrong.length === 0) return;
  process.stderr.write(
    `xstate-changes: expected ${wrong.map(([name, count]) => `${count} in ${name} (found ${(found[name] ?? inspectionCopies).join(", ") || "none"})`).join(", ")}; ` +
      "this XState's source differs from the one the preload was written for (5.33)\n",
  );
  if (code === 0) process.exitCode = 1;
});
