import { createMachine, type AnyStateMachine, type AnyStateNode } from "xstate";
import { AgentError } from "../errors/agent-error.js";
import { sanitizeDefinition } from "./definition.js";

/** A state of the machine as the inspector draws it. */
export interface ChartState {
  /** The id used in the diagram text (`s0`, `s1`, …): safe for Mermaid whatever the state's key. */
  id: string;
  /** What the page puts in `data-state`: the state's key, or its dotted path when keys repeat in the machine. */
  name: string;
  /** Keys from the root (the root itself excluded). */
  path: string[];
  type: "atomic" | "compound" | "parallel" | "final" | "history";
  /** The chart id of the enclosing compound or parallel state; absent for top-level states. */
  parent?: string;
  /** A history state's kind: drawn `H` (shallow) or `H*` (deep). */
  history?: "shallow" | "deep";
  /** The state's `description`. */
  description?: string;
  /** The actors it invokes, by `src` (or id). */
  invokes?: string[];
  /** Its targetless transitions (they run actions and stay): their titles, listed on the state. */
  internal?: string[];
}

/** Where an arrow of the diagram comes from. */
export type ChartEdgeKind =
  /** an `on` event */
  | "event"
  /** an eventless `always` transition */
  | "always"
  /** a delayed `after` transition */
  | "after"
  /** `onDone` of an invoked actor or of a compound state */
  | "done"
  /** `onError` of an invoked actor */
  | "error"
  /** `onSnapshot` of an invoked actor */
  | "snapshot"
  /** the start marker into a compound state's initial state */
  | "initial"
  /** a final state into the end marker */
  | "final";

/** One transition of the machine (or a start or end marker's arrow). */
export interface ChartEdge {
  /** Its position in `edges`. */
  index: number;
  /**
   * The number of the diagram arrow that draws it. Transitions between the same two states share one arrow, its
   * label listing each on a line of its own. Mermaid numbers the arrows of a state diagram in text order and renders
   * arrow `n` as a path with `data-id="edge<n>"`, which is how the page finds a transition's arrow.
   */
  arrow: number;
  /** The source state's name; `"[*]"` for a start marker; the name of an "any state" node for transitions a compound state (or the machine itself) takes from whichever child is active. */
  from: string;
  /** The target state's name; `"[*]"` for an end marker. */
  to: string;
  kind: ChartEdgeKind;
  /** The event descriptor as the machine knows it (`""` for `always`, the `xstate.after.…` event for `after`). */
  event: string;
  /** What the diagram writes for it, kept short: the event (or `after …`, `done`, `error`) and the guard; an eventless transition shows its guard only (`always` when it has none but shares its arrow). */
  label: string;
  /** The arrow in full words (`done: callModel [modelRequestedTools]`, `always [batchHasErrors]`). */
  title: string;
  /** The guard in words (`turnsExhausted`, `a && b`, `!c`). */
  guard?: string;
  /** The delay of an `after` transition: milliseconds or a named delay. */
  delay?: number | string;
}

/** A node standing for "whichever state is active" inside a compound state (or at the top for the machine). */
export interface ChartAnyState {
  id: string;
  /** What the page puts in `data-any-state`: `*` for the machine, `<compound name>.*` inside a compound state. */
  name: string;
  parent?: string;
}

/** A machine turned into a diagram: its states, its arrows and the Mermaid text that lays them out. */
export interface MachineChart {
  machineId: string;
  states: ChartState[];
  anyStates: ChartAnyState[];
  edges: ChartEdge[];
  /** How many arrows the diagram draws (transitions between the same two states share one). */
  arrows: number;
  /** Every guard named on an edge, once, in order of appearance. */
  guards: string[];
  /** `stateDiagram-v2` text: render it with Mermaid. */
  mermaid: string;
  /** The machine's own targetless transitions (root `on` that runs actions only), by title. */
  internal: string[];
  /** Where a definition sent by a client was cut by its serialization depth limit (absent when whole). */
  cut?: string[];
}

/**
 * Walks every state node of an XState v5 machine (including the `always` and `after` edges a directed graph of the
 * machine omits) and returns its chart.
 */
export function machineChart(machine: AnyStateMachine): MachineChart {
  if (!machine || typeof machine !== "object" || !("root" in machine) || !machine.root) {
    throw new AgentError("INVALID_OPTIONS", "machineChart needs an XState v5 machine (the value createMachine() or setup().createMachine() returns)");
  }
  return new ChartBuilder(machine.root as AnyStateNode).build();
}

/**
 * The chart of a machine known only by its definition: the JSON text (or parsed object) of a machine config, as
 * `@statelyai/inspect` sends in its `@xstate.actor` events. Implementations are not needed: the config is only
 * walked, never run.
 */
export function chartFromDefinition(definition: string | Record<string, unknown>): MachineChart {
  let config: unknown = definition;
  if (typeof definition === "string") {
    try {
      config = JSON.parse(definition);
    } catch (error) {
      throw new AgentError("INVALID_OPTIONS", `the machine definition is not JSON: ${(error as Error).message}`);
    }
  }
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    throw new AgentError("INVALID_OPTIONS", "the machine definition must be a machine config object (with `states`, `initial`, `on`…)");
  }
  try {
    // XState resolves targets lazily: a definition's errors surface while its chart is walked.
    const { config: shape, cut } = sanitizeDefinition(config as Record<string, unknown>);
    const chart = machineChart(createMachine(shape as never));
    return cut.length > 0 ? { ...chart, cut } : chart;
  } catch (error) {
    throw new AgentError("INVALID_OPTIONS", `the machine definition cannot be read as an XState v5 machine: ${(error as Error).message}`, { cause: error });
  }
}

class ChartBuilder {
  private readonly states: ChartState[] = [];
  private readonly anyStates: ChartAnyState[] = [];
  private readonly edges: ChartEdge[] = [];
  private readonly guards: string[] = [];
  private readonly byNode = new Map<AnyStateNode, ChartState>();
  private readonly anyOf = new Map<AnyStateNode, ChartAnyState>();
  private readonly lines: string[] = ["stateDiagram-v2"];
  private arrowCount = 0;

  constructor(private readonly root: AnyStateNode) {}

  build(): MachineChart {
    this.collect(this.root, undefined);
    this.emitChildren(this.root, "  ");
    return {
      machineId: this.root.id,
      states: this.states,
      anyStates: this.anyStates,
      edges: this.edges,
      arrows: this.arrowCount,
      guards: this.guards,
      mermaid: this.lines.join("\n") + "\n",
      internal: this.internalOf(this.root),
    };
  }

  /** Numbers every state and picks its name: the key when unique in the machine, else the dotted path. */
  private collect(node: AnyStateNode, parent: ChartState | undefined): void {
    const all: AnyStateNode[] = [];
    const walk = (n: AnyStateNode) => {
      for (const child of Object.values(n.states) as AnyStateNode[]) {
        all.push(child);
        walk(child);
      }
    };
    walk(node);
    const keyCount = new Map<string, number>();
    for (const n of all) keyCount.set(n.key, (keyCount.get(n.key) ?? 0) + 1);
    for (const n of all) {
      const parentNode = n.parent && n.parent !== this.root ? this.byNode.get(n.parent) : parent;
      const state: ChartState = {
        id: `s${this.states.length}`,
        name: keyCount.get(n.key) === 1 ? n.key : n.path.join("."),
        path: [...n.path],
        type: n.type,
        ...(parentNode ? { parent: parentNode.id } : {}),
        ...(n.type === "history" ? { history: n.history === "deep" ? ("deep" as const) : ("shallow" as const) } : {}),
        ...(typeof n.description === "string" && n.description ? { description: n.description } : {}),
      };
      const invokes = n.invoke.map((i) => (typeof i.src === "string" ? i.src : i.id));
      if (invokes.length) state.invokes = invokes;
      const internal = this.internalOf(n);
      if (internal.length) state.internal = internal;
      this.states.push(state);
      this.byNode.set(n, state);
    }
  }

  /** Writes the children of `node` (states, then its initial arrow, then their transitions) at one nesting level. */
  private emitChildren(node: AnyStateNode, indent: string): void {
    const children = Object.values(node.states) as AnyStateNode[];
    // Declared inside its compound state (or at the top for the machine) so the layout keeps it there.
    if (this.targetsOwnInside(node)) this.declareAnyState(node, indent);
    for (const child of children) {
      const state = this.byNode.get(child)!;
      const label = quoteLabel(child.key);
      if (child.type === "compound" || child.type === "parallel") {
        this.lines.push(`${indent}state ${label} as ${state.id} {`);
        this.emitChildren(child, indent + "  ");
        this.lines.push(`${indent}}`);
      } else {
        this.lines.push(`${indent}state ${label} as ${state.id}`);
      }
    }
    if (node.type === "compound" && children.length > 0) {
      const initial = node.initial?.target?.[0] as AnyStateNode | undefined;
      const target = initial ? this.byNode.get(initial) : undefined;
      if (target) this.arrow(indent, "[*]", target.id, [{ from: "[*]", to: target.name, kind: "initial", event: "", label: "", title: `initial state of ${node === this.root ? "the machine" : this.byNode.get(node)!.name}` }]);
    }
    // The children's transitions, a compound child's own included (its arrows leave its box or start from its
    // "any state" node); the machine's own transitions start from the top "any state" node.
    for (const child of children) this.emitTransitions(child, indent);
    if (node === this.root) this.emitTransitions(node, indent);
    for (const child of children) {
      if (child.type === "final") {
        const state = this.byNode.get(child)!;
        this.arrow(indent, state.id, "[*]", [{ from: state.name, to: "[*]", kind: "final", event: "", label: "", title: `${state.name} is final` }]);
      }
    }
  }

  /** The titles of a node's targetless transitions. */
  private internalOf(node: AnyStateNode): string[] {
    return this.transitionsOf(node)
      .filter((t) => !t.target || t.target.length === 0)
      .map((t) => {
        const kind = edgeKind(t.eventType, node);
        const guard = t.guard === undefined ? "" : ` [${guardText(t.guard)}]`;
        return `${edgeTitle(kind, t.eventType, t.delay, node)}${guard}`;
      });
  }

  private transitionsOf(node: AnyStateNode): TransitionLike[] {
    return [...[...node.transitions.values()].flat(), ...(node.always ?? [])] as TransitionLike[];
  }

  /** Whether some transition of `node` leads into `node` itself (the machine's own transitions always do). */
  private targetsOwnInside(node: AnyStateNode): boolean {
    return this.transitionsOf(node).some((t) => (t.target ?? []).some((target) => node === this.root || isInside(target, node)));
  }

  private emitTransitions(node: AnyStateNode, indent: string): void {
    // Grouped by source and target, in order of first appearance: one arrow per pair keeps a busy machine legible.
    const arrows = new Map<string, { fromId: string; toId: string; edges: Array<Omit<ChartEdge, "index" | "arrow">> }>();
    for (const t of this.transitionsOf(node)) {
      if (!t.target || t.target.length === 0) continue;
      for (const target of t.target) {
        const to = this.byNode.get(target);
        if (!to) continue;
        // Into its own inside: from its "any state" node. To itself (self re-entry): a loop on its own box.
        const inside = node === this.root || isInside(target, node);
        const from = inside ? this.anyOf.get(node)! : this.byNode.get(node)!;
        const guard = t.guard === undefined ? undefined : guardText(t.guard);
        if (guard !== undefined && !this.guards.includes(guard)) this.guards.push(guard);
        const kind = edgeKind(t.eventType, node);
        const withGuard = (text: string) => [text, guard !== undefined ? `[${guard}]` : ""].filter(Boolean).join(" ");
        const key = `${from.id}>${to.id}`;
        if (!arrows.has(key)) arrows.set(key, { fromId: from.id, toId: to.id, edges: [] });
        arrows.get(key)!.edges.push({
          from: from.name,
          to: to.name,
          kind,
          event: t.eventType,
          label: withGuard(kind === "always" ? "" : kind === "done" || kind === "error" || kind === "snapshot" ? kind : edgeTitle(kind, t.eventType, t.delay, node)),
          title: withGuard(edgeTitle(kind, t.eventType, t.delay, node)),
          ...(guard !== undefined ? { guard } : {}),
          ...(t.delay !== undefined ? { delay: t.delay } : {}),
        });
      }
    }
    for (const { fromId, toId, edges } of arrows.values()) {
      if (edges.length > 1) for (const e of edges) if (!e.label) e.label = e.kind;
      this.arrow(indent, fromId, toId, edges);
    }
  }

  /** The node standing for "whichever state is active" inside a compound state, or in the whole machine. */
  private declareAnyState(node: AnyStateNode, indent: string): void {
    const owner = node === this.root ? undefined : this.byNode.get(node);
    const any: ChartAnyState = { id: `any${this.anyStates.length}`, name: owner ? `${owner.name}.*` : "*", ...(owner ? { parent: owner.id } : {}) };
    this.anyStates.push(any);
    this.anyOf.set(node, any);
    this.lines.push(`${indent}state "${owner ? `any ${mermaidText(owner.name)} state` : "any state"}" as ${any.id}`);
  }

  /** One arrow of the diagram for one or more transitions between the same two nodes. */
  private arrow(indent: string, fromId: string, toId: string, edges: Array<Omit<ChartEdge, "index" | "arrow">>): void {
    const arrow = this.arrowCount++;
    for (const edge of edges) this.edges.push({ index: this.edges.length, arrow, ...edge });
    const labels = edges.map((e) => e.label).filter(Boolean).map(mermaidText);
    this.lines.push(`${indent}${fromId} --> ${toId}${labels.length ? ` : ${labels.join("<br/>")}` : ""}`);
  }
}

interface TransitionLike {
  eventType: string;
  target?: readonly AnyStateNode[];
  guard?: unknown;
  delay?: number | string;
}

/** Whether `node` is strictly inside `ancestor` (not `ancestor` itself). */
function isInside(node: AnyStateNode, ancestor: AnyStateNode): boolean {
  for (let n = node.parent; n; n = n.parent) if (n === ancestor) return true;
  return false;
}

/** `<work>.done` / `<work>.error`: how a long-lived actor (statecraft's effects actor) says a piece of work ended. */
const WORK_RESULT = /^([A-Za-z_$][\w$-]*)\.(done|error)$/;

function edgeKind(eventType: string, node: AnyStateNode): ChartEdgeKind {
  if (eventType === "") return "always";
  if (eventType.startsWith("xstate.after.")) return "after";
  if (eventType.startsWith("xstate.done.actor.") || eventType === `xstate.done.state.${node.id}`) return "done";
  if (eventType.startsWith("xstate.error.actor.")) return "error";
  const work = WORK_RESULT.exec(eventType);
  if (work) return work[2] === "done" ? "done" : "error";
  if (eventType.startsWith("xstate.snapshot.")) return "snapshot";
  return "event";
}

function edgeTitle(kind: ChartEdgeKind, eventType: string, delay: number | string | undefined, node: AnyStateNode): string {
  switch (kind) {
    case "always":
      return "always";
    case "after":
      return typeof delay === "number" ? `after ${delay}ms` : `after ${delay ?? "delay"}`;
    case "done":
      if (eventType.startsWith("xstate.done.actor.")) return `done: ${actorName(eventType.slice("xstate.done.actor.".length), node)}`;
      return WORK_RESULT.test(eventType) ? `done: ${WORK_RESULT.exec(eventType)![1]}` : "done";
    case "error":
      if (eventType.startsWith("xstate.error.actor.")) return `error: ${actorName(eventType.slice("xstate.error.actor.".length), node)}`;
      return `error: ${WORK_RESULT.exec(eventType)![1]}`;
    case "snapshot":
      return `snapshot: ${actorName(eventType.slice("xstate.snapshot.".length), node)}`;
    default:
      return eventType === "*" ? "any event" : eventType;
  }
}

/** An invoked actor's name: its `src` when it names one, else its id. */
function actorName(invokeId: string, node: AnyStateNode): string {
  const invoke = node.invoke.find((i) => i.id === invokeId);
  if (invoke && typeof invoke.src === "string") return invoke.src === invokeId ? invokeId : invoke.src;
  return invokeId;
}

/** A guard in words: its name, its `type`, or `and`/`or`/`not` of the guards it combines. */
export function guardText(guard: unknown): string {
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const combined = (guard as { guards?: unknown[] }).guards;
    if (Array.isArray(combined)) {
      const parts = combined.map(guardText);
      if (guard.name === "not") return `!${parts[0] ?? "?"}`;
      if (guard.name === "and") return parts.join(" && ");
      if (guard.name === "or") return parts.join(" || ");
    }
    return guard.name || "guard";
  }
  if (guard && typeof guard === "object" && typeof (guard as { type?: unknown }).type === "string") {
    return (guard as { type: string }).type || "guard";
  }
  return "guard";
}

/** Mermaid reads `;`, `#`, quotes, braces and angle brackets as syntax: keep labels to plain text. */
function mermaidText(text: string): string {
  return text.replace(/[^\p{L}\p{N} _.,:!&|()[\]=+\-/*'@$%?]/gu, " ").replace(/\s+/g, " ").trim() || "_";
}

function quoteLabel(key: string): string {
  return `"${mermaidText(key)}"`;
}
