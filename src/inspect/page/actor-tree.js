// The session picker's order and names: XState actors as a tree (children under their parent, by the app they come
// from), runs and traces as they came. Pure functions over the page's sessions, so the picker is easy to follow.

/** The sessions in picker order, each with its depth: an actor's children follow it, nested one level deeper. */
export function pickerOrder(sessions) {
  const list = [...sessions];
  const byKey = new Map(list.map((s) => [s.key, s]));
  const parentOf = (s) => (s.kind === "actor" && s.parentId ? byKey.get(`actor:${s.parentId}`) : undefined);
  const children = new Map();
  const roots = [];
  for (const s of list) {
    const parent = parentOf(s);
    if (!parent) roots.push(s);
    else {
      if (!children.has(parent.key)) children.set(parent.key, []);
      children.get(parent.key).push(s);
    }
  }
  const out = [];
  const seen = new Set();
  const visit = (s, depth) => {
    if (seen.has(s.key)) return; // a parent loop in bad data must not hang the page
    seen.add(s.key);
    out.push({ session: s, depth });
    for (const child of children.get(s.key) ?? []) visit(child, depth + 1);
  };
  for (const s of roots) visit(s, 0);
  for (const s of list) visit(s, 0); // anything left in a loop of parents
  return out;
}

/**
 * An actor's name in the picker: its app (top-level actors only: children are under it), its name, its system id
 * when it has one, its session id (without the client prefix the server adds), and whether it is still live.
 */
export function actorLabel(s, depth) {
  const indent = depth > 0 ? `${"  ".repeat(depth - 1)}↳ ` : "";
  const app = depth === 0 && s.app ? `${s.app} · ` : "";
  const system = s.systemId && s.systemId !== s.name ? ` #${s.systemId}` : "";
  const id = String(s.id).replace(/^ws\d+\//, "");
  return `${indent}${app}${s.name}${system} · ${id}${s.ended ? "" : " (live)"}`;
}
