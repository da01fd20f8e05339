/** Names of environment variables whose values are secrets. */
const SECRET_NAME = /(_KEY|_TOKEN|_SECRET|_PASSWORD|^API_KEY|^TOKEN|^SECRET|^PASSWORD)$/i;
const MIN_SECRET_LENGTH = 6;
export const REDACTED = "[REDACTED]";
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/-]{8,}=*/g;
/**
 * The value of an Authorization header, whatever its scheme, as it appears in text (`Authorization: Basic …`), in
 * JSON (`"authorization":"token …"`) or in JSON inside a JSON string (escaped quotes).
 */
const AUTHORIZATION =
  /\b((?:proxy-)?authorization)(\\?["']?\s*[:=]\s*\\?["']?)((?:Basic|Bearer|Token|Digest|Negotiate|NTLM|Key|AWS4-HMAC-SHA256)\s+)?(?!\[REDACTED\])(?!(?:Basic|Bearer|Token|Digest|Negotiate|NTLM|Key|AWS4-HMAC-SHA256)\s)[^\s"'\\,;}]{4,}/gi;
/** API keys in well-known formats (OpenAI, Anthropic, GitHub, Slack, AWS, Google), even when no variable holds them. */
const KEY_FORMATS =
  /\b(?:sk-(?:proj-|ant-(?:api\d\d-)?|or-v1-)?[A-Za-z0-9_-]{32,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})/g;

const KEY_PREFIXES = ["sk-", "gh", "github_pat_", "xox", "AKIA", "AIza"];
/**
 * Matches every line that one of the patterns above could change (their fixed parts, ignoring case): most lines hold
 * none, and one scan for all of them is cheaper than a scan for each.
 */
const MAY_HOLD_SECRET = /Bearer|authorization|sk-|gh|github_pat_|xox|AKIA|AIza/i;

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

/**
 * Redacts secrets in one serialised JSON line (cheaper than walking the value: one scan per secret): the environment's
 * secret values, Authorization header values, Bearer tokens and API keys in well-known formats. Tool inputs and
 * outputs are inside the line, so they are covered wherever they appear (a response's arguments, a call's input, a result).
 */
export function redactLine(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (!MAY_HOLD_SECRET.test(out)) return out;
  if (out.includes("Bearer")) out = out.replace(BEARER, `$1 ${REDACTED}`);
  if (/authorization/i.test(out)) out = out.replace(AUTHORIZATION, `$1$2$3${REDACTED}`);
  // Most lines hold no key: a few substring checks spare the regular expression's scan.
  if (KEY_PREFIXES.some((prefix) => out.includes(prefix))) out = out.replace(KEY_FORMATS, REDACTED);
  return out;
}
