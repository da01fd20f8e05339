/**
 * An error a server reported in the body of a successful (HTTP 200) response: an `error` key inside a stream chunk,
 * an `event: error` message, or a JSON body. It carries the payload so error-classification.ts can read its status.
 */
export class ServerErrorPayload extends Error {
  readonly payload: unknown;

  constructor(payload: unknown) {
    super(messageOf(payload));
    this.name = "ServerErrorPayload";
    this.payload = payload;
  }
}

function messageOf(payload: unknown): string {
  if (typeof payload === "string") return payload;
  if (typeof payload === "object" && payload !== null) {
    const message = (payload as { message?: unknown }).message;
    if (typeof message === "string") return message;
  }
  try {
    return JSON.stringify(payload);
  } catch {
    return String(payload);
  }
}
