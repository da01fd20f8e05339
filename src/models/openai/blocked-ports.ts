/**
 * The ports `fetch` refuses to connect to (the WHATWG Fetch standard's "bad ports", which Node's fetch enforces): a
 * request to one fails at once with "bad port" whatever listens there, so retrying or "is the server running?" can
 * only mislead. Checked against Node 20's fetch, which refuses every one of these.
 */
const BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135,
  137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719,
  1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The URL's port when it is one fetch refuses (the scheme's default port counts); undefined otherwise. */
export function blockedPort(url: string): number | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
  return BLOCKED_PORTS.has(port) ? port : undefined;
}

/** What to say about a URL on a port fetch refuses: what is wrong, and what to do. */
export function blockedPortMessage(url: string, port: number | string, setting = "baseURL (OPENAI_BASE_URL)"): string {
  return (
    `${url} is on port ${port}, which fetch refuses to connect to (a port the Fetch standard blocks as unsafe, whatever listens there); ` +
    `run the server on another port (e.g. 8080) and point ${setting} at it`
  );
}
