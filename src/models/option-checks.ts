import { AgentError } from "../errors/agent-error.js";

/** The checks of one model factory's options, each failure an `INVALID_OPTIONS` error whose message starts with its name. */
export interface OptionChecks {
  invalid(message: string): AgentError;
  /** `value` as an integer ≥ `min`, or `fallback` when it is absent. */
  integer(name: string, value: unknown, fallback: number, min: number): number;
  /** A copy of `headers` checked to be header names to string values (none when absent). */
  headers(headers: unknown): Record<string, string>;
}

/** The option checks of the factory `factory` (e.g. "openaiModel"), whose name opens each message. */
export function optionChecks(factory: string): OptionChecks {
  const invalid = (message: string) => new AgentError("INVALID_OPTIONS", `${factory}: ${message}`);
  return {
    invalid,
    integer(name, value, fallback, min) {
      if (value === undefined) return fallback;
      if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw invalid(`${name} must be an integer ≥ ${min}, got ${describe(value)}`);
      return value;
    },
    headers(headers) {
      if (headers === undefined) return {};
      if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
        throw invalid(`headers must be an object of header names to string values, got ${describe(headers)}`);
      }
      for (const [name, value] of Object.entries(headers)) {
        if (typeof value !== "string") throw invalid(`headers["${name}"] must be a string, got ${describe(value)}`);
      }
      return { ...(headers as Record<string, string>) };
    },
  };
}

/** A value as an error message shows it: strings quoted, objects and arrays by kind (never their content). */
export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : String(value);
}

/** An environment variable's value, trimmed, or undefined when it is unset or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
