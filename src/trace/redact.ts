/** Names of environment variables whose values are secrets. */
const SECRET_NAME = /(_KEY|_TOKEN|_SECRET|_PASSWORD|^API_KEY|^TOKEN|^SECRET|^PASSWORD)$/i;
const MIN_SECRET_LENGTH = 6;
export const REDACTED = "[REDACTED]";
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/-]{8,}=*/g;

/**
 * The secret values of an environment (values of variables named like *_KEY, *_TOKEN, *_SECRET, *_PASSWORD), as they
 * appear inside a JSON string, longest first so a secret containing another is replaced whole.
 */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) values.add(JSON.stringify(value).slice(1, -1));
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** Redacts secrets in one serialised JSON line (cheaper than walking the value: one scan per secret). */
export function redactLine(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (out.includes("Bearer")) out = out.replace(BEARER, `$1 ${REDACTED}`);
  return out;
}
