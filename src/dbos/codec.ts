import { AgentError } from "../errors/agent-error.js";

/**
 * A step's output as DBOS records it: JSON text, with errors kept as `{ $error: { code, message, … } }` and revived
 * as AgentErrors (the engine branches on `code`, which a plain Error round trip would lose).
 */
export function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, given: unknown) {
    // The value before toJSON (an AgentError's toJSON would drop what makes it an error).
    const v = key === "" ? value : this[key];
    if (v instanceof Error) {
      const e = v as Partial<AgentError>;
      return {
        $error: {
          code: typeof e.code === "string" ? e.code : "TOOL_FAILED",
          message: v.message,
          ...(typeof e.status === "number" ? { status: e.status } : {}),
          ...(e.retryable === true ? { retryable: true } : {}),
          ...(e.data !== undefined ? { data: e.data } : {}),
        },
      };
    }
    return given;
  });
}

export function decode<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && "$error" in v) {
      const e = (v as { $error: { code: string; message: string; status?: number; retryable?: boolean; data?: Record<string, unknown> } }).$error;
      return new AgentError(e.code, e.message, {
        ...(e.status !== undefined ? { status: e.status } : {}),
        ...(e.retryable ? { retryable: true } : {}),
        ...(e.data !== undefined ? { data: e.data } : {}),
      });
    }
    return v;
  }) as T;
}
