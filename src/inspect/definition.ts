/*
 * A machine definition as `@statelyai/inspect` sends it: the config as JSON, functions as `{ type: name }`, and
 * everything deeper than its `serializationDepthLimit` (10 by default) cut to the strings "[Object]" / "[Array]". A
 * realistic nested machine arrives cut; what can still be drawn is kept, and where it was cut is said.
 */

/** What the sender's depth limit leaves in place of a value. */
const CUT = new Set(["[Object]", "[Array]"]);

export function isCut(value: unknown): boolean {
  return typeof value === "string" && CUT.has(value);
}

export interface SanitizedDefinition {
  config: Record<string, unknown>;
  /** The paths (`states.a.on.GO`) where the definition was cut; empty when it arrived whole. */
  cut: string[];
}

/**
 * Keeps of a serialized config only what XState can read as a machine's shape: cut transitions become targetless ones
 * (the event is still listed), cut states become atomic, cut actors and delays are left out, and each cut is noted.
 */
export function sanitizeDefinition(config: Record<string, unknown>): SanitizedDefinition {
  const cut: string[] = [];
  const out = node(config, "", cut);
  // What was cut may be the target of a transition elsewhere: such targets are left out rather than failing it all.
  if (cut.length > 0) dropLostTargets(out, cut);
  return { config: out, cut };
}

interface Shape {
  states: Map<string, Shape>;
  parent?: Shape;
}

/** Removes the targets that name no state of the (cut) config, noting each. */
function dropLostTargets(root: Record<string, unknown>, cut: string[]): void {
  const ids = new Map<string, Shape>();
  const build = (config: Record<string, unknown>, path: string[], parent: Shape | undefined): Shape => {
    const shape: Shape = { states: new Map(), ...(parent ? { parent } : {}) };
    const machineId = typeof root.id === "string" ? root.id : "(machine)";
    ids.set(typeof config.id === "string" ? config.id : [machineId, ...path].join("."), shape);
    if (isRecord(config.states)) {
      for (const [key, child] of Object.entries(config.states)) shape.states.set(key, build(isRecord(child) ? child : {}, [...path, key], shape));
    }
    return shape;
  };
  const top = build(root, [], undefined);
  const down = (from: Shape | undefined, keys: string[]): boolean => {
    let at = from;
    for (const key of keys) at = at?.states.get(key);
    return at !== undefined;
  };
  const resolves = (target: string, state: Shape): boolean => {
    if (target.startsWith("#")) {
      const rest = target.slice(1);
      // An id may itself hold dots: the longest id that is a prefix wins.
      for (let i = rest.length; i > 0; i = rest.lastIndexOf(".", i - 1)) {
        const id = rest.slice(0, i);
        if (ids.has(id)) return down(ids.get(id), i < rest.length ? rest.slice(i + 1).split(".") : []);
      }
      return false;
    }
    if (target.startsWith(".")) return down(state, target.slice(1).split("."));
    return down(state.parent, target.split("."));
  };
  const fix = (value: unknown, state: Shape, at: string): unknown => {
    if (typeof value === "string") {
      if (resolves(value, state)) return value;
      cut.push(`${at} (target ${value})`);
      return {};
    }
    if (Array.isArray(value)) return value.map((v, i) => fix(v, state, `${at}.${i}`));
    if (!isRecord(value) || value.target === undefined) return value;
    const targets = (Array.isArray(value.target) ? value.target : [value.target]).filter((t) => {
      if (typeof t !== "string" || resolves(t, state)) return true;
      cut.push(`${at} (target ${t})`);
      return false;
    });
    return { ...value, target: targets };
  };
  const walk = (config: Record<string, unknown>, state: Shape, at: string) => {
    const path = (key: string) => (at ? `${at}.${key}` : key);
    if (isRecord(config.on)) config.on = mapValues(config.on, (v, k) => fix(v, state, path(`on.${k}`)));
    if (isRecord(config.after)) config.after = mapValues(config.after, (v, k) => fix(v, state, path(`after.${k}`)));
    for (const key of ["always", "onDone"]) if (config[key] !== undefined) config[key] = fix(config[key], state, path(key));
    if (Array.isArray(config.invoke)) {
      config.invoke = config.invoke.map((inv: Record<string, unknown>, i: number) => {
        const copy = { ...inv };
        for (const key of ["onDone", "onError", "onSnapshot"]) if (copy[key] !== undefined) copy[key] = fix(copy[key], state, path(`invoke.${i}.${key}`));
        return copy;
      });
    }
    if (typeof config.initial === "string" && !state.states.has(config.initial)) {
      cut.push(`${path("initial")} (${config.initial})`);
      delete config.initial;
    }
    if (isRecord(config.states)) for (const [key, child] of Object.entries(config.states)) if (isRecord(child)) walk(child, state.states.get(key)!, path(`states.${key}`));
  };
  walk(root, top, "");
}

function node(input: Record<string, unknown>, at: string, cut: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  // The context of a definition is the sender's data, irrelevant to the shape and possibly cut by the depth limit.
  delete out.context;
  const path = (key: string) => (at ? `${at}.${key}` : key);
  for (const key of Object.keys(out)) {
    if (isCut(out[key])) {
      cut.push(path(key));
      if (key === "states") delete out.initial;
      delete out[key];
    }
  }
  if (out.states !== undefined) {
    if (out.states && typeof out.states === "object" && !Array.isArray(out.states)) {
      out.states = Object.fromEntries(
        Object.entries(out.states as Record<string, unknown>).map(([key, child]) => {
          if (isCut(child)) cut.push(path(`states.${key}`));
          return [key, child && typeof child === "object" && !Array.isArray(child) ? node(child as Record<string, unknown>, path(`states.${key}`), cut) : {}];
        }),
      );
    } else {
      delete out.states;
      delete out.initial;
    }
  }
  if (isRecord(out.on)) out.on = mapValues(out.on, (value, event) => transitions(value, path(`on.${event}`), cut));
  if (isRecord(out.after)) out.after = mapValues(out.after, (value, delay) => transitions(value, path(`after.${delay}`), cut));
  for (const key of ["always", "onDone", "onError", "onSnapshot"]) {
    if (out[key] !== undefined) out[key] = transitions(out[key], path(key), cut);
  }
  if (Array.isArray(out.invoke) || isRecord(out.invoke)) {
    const list = (Array.isArray(out.invoke) ? out.invoke : [out.invoke]).filter((inv, i) => {
      if (isRecord(inv)) return true;
      cut.push(path(`invoke.${i}`));
      return false;
    }) as Record<string, unknown>[];
    out.invoke = list.map((inv, i) => {
      const copy = { ...inv };
      for (const key of ["onDone", "onError", "onSnapshot"]) if (copy[key] !== undefined) copy[key] = transitions(copy[key], path(`invoke.${i}.${key}`), cut);
      if (isCut(copy.src)) {
        cut.push(path(`invoke.${i}.src`));
        copy.src = "[cut]";
      }
      return copy;
    });
  }
  return out;
}

/** A transition config (a target, an object, or a list of them) with its cut parts made harmless. */
function transitions(value: unknown, at: string, cut: string[]): unknown {
  if (isCut(value)) {
    cut.push(at);
    return {}; // the event stays listed, as a transition whose target is not known
  }
  if (Array.isArray(value)) return value.map((v, i) => transitions(v, `${at}.${i}`, cut));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const key of ["target", "guard"]) {
    if (isCut(out[key])) {
      cut.push(`${at}.${key}`);
      delete out[key];
    }
  }
  if (Array.isArray(out.target)) {
    out.target = out.target.filter((t, i) => {
      if (!isCut(t)) return true;
      cut.push(`${at}.target.${i}`);
      return false;
    });
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

function mapValues(record: Record<string, unknown>, fn: (value: unknown, key: string) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value, key)]));
}
