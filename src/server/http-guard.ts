import { createHash, timingSafeEqual } from "node:crypto";

/** An HTTP answer the server gives instead of going on: status and a JSON error naming what was wrong. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** What the guard lets through: the hosts and origins it answers, and the token. */
export interface GuardSettings {
  token: string;
  /** Host header values (`name:port` or `name`) answered besides loopback names; undefined: loopback names only. */
  hosts: readonly string[];
  /** Origins of browser pages allowed besides the server's own. */
  origins: readonly string[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Checks a request as the inspector does: a Host it answers to (a page of another site resolving its own name to
 * 127.0.0.1, DNS rebinding, must not drive runs), an Origin of its own or an allowed app, and the bearer token.
 */
export function guard(request: Request, settings: GuardSettings): void {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const hostname = host.replace(/:\d+$/, "").toLowerCase();
  if (!LOOPBACK.has(hostname) && !settings.hosts.includes(host.toLowerCase()) && !settings.hosts.includes(hostname)) {
    throw new HttpProblem(403, "HOST_NOT_ALLOWED", `this server does not answer to Host ${JSON.stringify(host)}; it answers to 127.0.0.1, localhost${settings.hosts.length ? ` and ${settings.hosts.join(", ")}` : ""} (statecraft serve --host, or serve({ hosts }))`);
  }
  const origin = request.headers.get("origin");
  // Node clients send no Origin; a browser sends one: a page of this server, or an allowed app's.
  if (origin !== null && origin !== `http://${host}` && origin !== `https://${host}` && !settings.origins.includes(origin)) {
    throw new HttpProblem(403, "ORIGIN_NOT_ALLOWED", `requests from pages of ${origin} are not allowed; allow that origin with serve({ allowOrigins: [${JSON.stringify(origin)}] }) or statecraft serve --allow-origin ${origin}`);
  }
  const problem = tokenProblem(request.headers.get("authorization"), settings.token);
  if (problem) throw new HttpProblem(401, "UNAUTHORIZED", problem, { "WWW-Authenticate": 'Bearer realm="statecraft"' });
}

/** Why the Authorization header does not carry the token, or undefined. Compared in constant time, by digest. */
function tokenProblem(header: string | null, token: string): string | undefined {
  if (header === null) return "this server needs a bearer token: send Authorization: Bearer <token> (statecraft serve prints it at start, or reads it from --token-file)";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return "the Authorization header must be Bearer <token>";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token)) ? undefined : "the bearer token is not this server's token";
}

/** The request's body as JSON, read up to `limit` bytes: past it a 413, bad JSON or another type a 400. */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new HttpProblem(415, "UNSUPPORTED_MEDIA_TYPE", `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : "no Content-Type"})`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  const tooLarge = () => new HttpProblem(413, "BODY_TOO_LARGE", `the body is larger than this server's limit of ${limit} bytes (serve({ maxBodyBytes }) or statecraft serve --max-body-bytes)`);
  if (declared > limit) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") throw new HttpProblem(400, "INVALID_REQUEST", "the body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpProblem(400, "INVALID_JSON", `the body is not JSON: ${(error as Error).message}`);
  }
}

const NO_STORE = { "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" };

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json; charset=utf-8", ...NO_STORE, ...headers } });
}

/** `{ error: { code, message } }`, the shape of every error this server answers. */
export function problemResponse(problem: HttpProblem): Response {
  return json(problem.status, { error: { code: problem.code, message: problem.message } }, problem.headers);
}

/** A plain object, or a 400 naming `what`. */
export function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new HttpProblem(400, "INVALID_REQUEST", `${what} must be a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}

/** Headers of a Server-Sent Events answer. */
export const SSE_HEADERS: Record<string, string> = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", Connection: "keep-alive", "X-Accel-Buffering": "no", "X-Content-Type-Options": "nosniff" };
