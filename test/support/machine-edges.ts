import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";

/**
 * One edge of a machine's static graph, named so that the same edge of two machines built from one config (say
 * `engineMachine` and `engineMachine.provide(...)`) gets the same key: source node, event (`always` for eventless
 * edges), its position among the candidates for that event (with the guard's name), and the targets.
 */
export function edgeKey(transition: AnyTransitionDefinition): string {
  const source = transition.source;
  const eventless = transition.eventType === "";
  const candidates: readonly AnyTransitionDefinition[] = eventless ? (source.always ?? []) : (source.transitions.get(transition.eventType) ?? []);
  const index = candidates.indexOf(transition);
  const guard = guardName(transition.guard);
  const targets = transition.target?.map((t: AnyStateNode) => t.id).join(",") || "(no target)";
  return `${source.id} --${eventless ? "always" : transition.eventType}[${index}${guard ? ` if ${guard}` : ""}]--> ${targets}`;
}

/** Every edge of the machine: each node's event transitions (`on`, invoke onDone/onError, `after`) and `always`. */
export function staticEdges(machine: AnyStateMachine): string[] {
  const edges: string[] = [];
  const walk = (node: AnyStateNode) => {
    for (const candidates of node.transitions.values()) for (const t of candidates) edges.push(edgeKey(t));
    for (const t of node.always ?? []) edges.push(edgeKey(t));
    for (const child of Object.values(node.states) as AnyStateNode[]) walk(child);
  };
  walk(machine.root);
  return edges;
}

function guardName(guard: unknown): string {
  if (guard === undefined) return "";
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const nested = (guard as { guards?: unknown[] }).guards;
    return nested ? `${guard.name}(${nested.map(guardName).join(", ")})` : guard.name || "inline";
  }
  if (guard && typeof guard === "object" && "type" in guard) return String((guard as { type: unknown }).type);
  return "?";
}
