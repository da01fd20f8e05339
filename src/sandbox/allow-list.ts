/**
 * `sandbox.network.allow`: `host` (any port), `host:port`, `*.domain` (its subdomains, not the domain itself, as
 * sandbox-runtime reads it), `[v6]:port`. Names are compared lower case and without a trailing dot; an IP address
 * matches only as written (`localhost` is not `127.0.0.1`).
 */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const name = normalise(host);
  return allow.some((entry) => {
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.startsWith("[") ? entry.replace(/^\[([^\]]+)\](.*)$/, "$1$2") : entry)!;
    // An IPv6 entry without brackets has colons of its own: only a bracketed one carries a port.
    const bracketed = entry.startsWith("[");
    const pattern = normalise(bracketed ? entry.slice(1, entry.indexOf("]")) : m[1]);
    const wanted = bracketed ? /\]:(\d+)$/.exec(entry)?.[1] : m[2];
    if (wanted !== undefined && Number(wanted) !== port) return false;
    if (pattern.startsWith("*.")) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    return name === pattern;
  });
}

function normalise(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, "");
}
