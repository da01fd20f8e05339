/**
 * Redaction of secrets in what statecraft records or shows: trace, audit and transcript lines, the inspector's records
 * and error messages all pass through `redactLine` (text that is not a JSON line through `redactText`), so a secret
 * is hidden the same way wherever it would appear. Tools and the model are not redacted: they see the real values.
 *
 * The patterns work on serialised JSON, where a line break is the two characters `\n` and a value inside a JSON
 * string inside a JSON string (a tool call's arguments) is escaped twice: word boundaries and value ends are written
 * for that text, not for the raw one.
 */

export const REDACTED = "[REDACTED]";

/**
 * Names of environment variables (and of assignments in text) whose values are secrets: `*_KEY`, `*_TOKEN`,
 * `*_SECRET`, `*_PASSWORD`, `*_PASSWD`, `*_PASS`, `*_PWD`, `*_CREDENTIALS`, `*_AUTH`, and `PASSWORD`, `TOKEN`,
 * `SECRET`, `API_KEY`, `CREDENTIALS` alone or at the end of a longer name (`PGPASSWORD`). Not `PWD` alone: that is the
 * working directory.
 */
const NAME_TAIL = String.raw`(?:[_-](?:KEY|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)|PASSWORD|PASSWD|TOKEN|SECRET|API_?KEY|CREDENTIALS)`;
const SECRET_NAME = new RegExp(`^[A-Za-z0-9_-]*?${NAME_TAIL}$`, "i");
const MIN_SECRET_LENGTH = 6;

/**
 * Where a word starts in serialised JSON: not after a letter, digit or `_` — but after an escaped line break or tab
 * (`\n`, `\t`, `\r`) it does, though `\b` sees the `n` of `\n` as part of the word.
 */
const START = String.raw`(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))`;
/** Where a name that may hold `-` starts (`X-Api-Key`): as START, `-` counting as part of the name. */
const NAME_START = String.raw`(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))`;
/** Quotes around a name or a value, as plain text, JSON, or JSON inside a JSON string (any number of backslashes). */
const QUOTE = String.raw`\\*["']`;

const BEARER = new RegExp(`${START}(Bearer)(\\s+)(?!\\[REDACTED\\])[A-Za-z0-9._~+/-]{8,}=*`, "g");
const SCHEMES = "Basic|Bearer|Token|Digest|Negotiate|NTLM|Key|AWS4-HMAC-SHA256";
/**
 * The value of an Authorization header, whatever its scheme, as it appears in text (`Authorization: Basic …`), in
 * JSON (`"authorization":"token …"`) or in JSON inside a JSON string (escaped quotes).
 */
const AUTHORIZATION = new RegExp(
  `${START}((?:proxy-)?authorization)((?:${QUOTE})?\\s*[:=]\\s*(?:${QUOTE})?)((?:${SCHEMES})\\s+)?(?!\\[REDACTED\\])(?!(?:${SCHEMES})\\s)[^\\s"'\\\\,;}]{4,}`,
  "gi",
);
/** A URL's user information (`https://user:password@host`): user and password both, a token is often the user. */
const URL_CREDENTIALS = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)(?!\[REDACTED\]@)[^\s/?#@"'\\<>]*:[^\s/?#"'\\<>]*@/g;
/**
 * A PEM private key (RSA, EC, OpenSSH, PKCS#8, encrypted, PGP), from its BEGIN line to its END line; one cut off
 * before its END (a truncated output) up to the end of the string that holds it.
 */
const PRIVATE_KEY = /(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)(?!\[REDACTED\])[^"]*?(-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?=\\*"|$))/g;
/**
 * A secret-named variable or key given a value: `DB_PASS=…`, `export API_TOKEN="…"`, `"client_secret": "…"`,
 * `X-Api-Key: …`. A quoted value is cut at its closing quote or a line end, a bare one at a space, quote, backslash,
 * `,`, `;` or `&`.
 * A JSON key is followed by a quote, so a number or an object under such a key is left alone (the line stays JSON).
 */
const ASSIGNMENT = new RegExp(
  `${NAME_START}([A-Za-z0-9_-]*?${NAME_TAIL})(${QUOTE})?(\\s*[:=]\\s*)(?:(${QUOTE})(?!\\[REDACTED\\])(?:[^"'\\\\]|\\\\(?!\\\\*["']|[nrt]))+|(?!\\[REDACTED\\]|${QUOTE}|\\s)([^\\s"'\\\\,;&]+))`,
  "gi",
);
/** API keys in well-known formats, even when no variable holds them. */
const KEY_FORMATS = new RegExp(
  START +
    "(?:" +
    [
      "sk-(?:proj-|ant-(?:api\\d\\d-)?|or-v1-)?[A-Za-z0-9_-]{32,}", // OpenAI, Anthropic, OpenRouter
      "gh[pousr]_[A-Za-z0-9]{36,}", // GitHub
      "github_pat_[A-Za-z0-9_]{40,}",
      "glpat-[A-Za-z0-9_-]{20,}", // GitLab
      "xox[abprs]-[A-Za-z0-9-]{10,}", // Slack
      "(?:AKIA|ASIA)[0-9A-Z]{16}", // AWS access key ids
      "AIza[0-9A-Za-z_-]{35}", // Google
      "[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", // Stripe secret and restricted keys
      "whsec_[A-Za-z0-9]{24,}", // Stripe webhook secrets
      "npm_[A-Za-z0-9]{36}", // npm
      "hf_[A-Za-z0-9]{30,}", // Hugging Face
      "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", // JSON Web Tokens
    ].join("|") +
    ")",
  "g",
);
const KEY_PREFIXES = ["sk-", "gh", "github_pat_", "glpat-", "xox", "AKIA", "ASIA", "AIza", "k_live_", "k_test_", "whsec_", "npm_", "hf_", "eyJ"];

/**
 * Matches every line that one of the patterns above could change (their fixed parts, ignoring case), but for a URL's
 * credentials (`URL_AT`): most lines hold none, and one scan for all of them is cheaper than a scan for each. The
 * words are grouped by their first letter (and those inside another left out: `authoriz`, `private key`), so the scan
 * tries one branch per character instead of every word: about half the time of a flat list of the same words, on
 * every line recorded.
 */
const MAY_HOLD_SECRET = /a(?:uth|kia|sia|iza)|bearer|credential|eyj|g(?:h[pousr]_|ithub_pat_|lpat-)|hf_|k(?:ey|_live_|_test_)|npm_|p(?:ass|wd)|s(?:ecret|k-)|token|whsec_|xox/i;
/** A URL's user information could follow (`URL_CREDENTIALS`). */
const URL_AT = /:\/\/[^\s/]*@/;
const MAY_ASSIGN = /key|token|secret|pass|pwd|credential|auth/i;

/**
 * The secret values of an environment (values of variables named as above), as they appear inside a JSON string and
 * inside a JSON string in a JSON string (a value holding `"` or `\` differs in each), longest first so a secret
 * containing another is replaced whole.
 */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  // Names first: reading a value of process.env is a call into the runtime, and most variables are not secret-named.
  for (const name of Object.keys(env)) {
    if (!SECRET_NAME.test(name)) continue;
    const value = env[name];
    if (!value || value.length < MIN_SECRET_LENGTH) continue;
    let escaped = value;
    // Up to three levels: a tool's JSON output inside a call's arguments inside a trace line.
    for (let level = 0; level < 3; level++) {
      escaped = JSON.stringify(escaped).slice(1, -1);
      values.add(escaped);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** Whether an environment variable of this name holds a secret (`DB_PASS`, `MYSQL_PWD`, `AWS_CREDENTIALS`, …). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * Whether any of the patterns could change text holding this: the prefilter of `redactLine`, plus the `://` that
 * starts a URL's credentials (whose `@` may lie past the end of the piece tested).
 */
export function mayHoldSecret(text: string): boolean {
  return MAY_HOLD_SECRET.test(text) || text.includes("://");
}

/**
 * `redactLine` for a line made of fixed pieces, already found free of what the patterns look for (`mayHoldSecret`
 * false for each), and one piece of its own (`own`): only `own` is scanned for the patterns, the whole line for the
 * secret values. The same text as `redactLine(line)` when the pieces are joined by JSON punctuation (`"`, `:`, `,`,
 * `{`), digits or an ISO time, none of which a pattern's fixed text holds, so no match can span two pieces.
 */
export function redactOwnPart(line: string, own: string, secrets: readonly string[]): string {
  for (let i = 0; i < secrets.length; i++) if (line.includes(secrets[i])) return redactLine(line, secrets);
  return mayHoldSecret(own) ? redactLine(line, secrets) : line;
}

/**
 * Redacts secrets in one serialised JSON line (cheaper than walking the value: one scan per secret): the environment's
 * secret values, values given to secret-named variables and keys, Authorization header values, Bearer tokens, URL
 * credentials, PEM private keys and API keys in well-known formats. Tool inputs and outputs are inside the line, so
 * they are covered wherever they appear (a response's arguments, a call's input, a result). The line stays valid JSON.
 */
export function redactLine(line: string, secrets: readonly string[], replace?: (secret: string) => string): string {
  if (replace !== undefined) return replaceSecrets(line, secrets, replace);
  let out = line;
  let replaced = false;
  for (const secret of secrets) {
    if (out.includes(secret)) {
      out = out.split(secret).join(REDACTED);
      replaced = true;
    }
  }
  if (MAY_HOLD_SECRET.test(out) || URL_AT.test(out)) {
    // Most lines hold none of these: a substring check spares each pattern's scan.
    if (out.includes("PRIVATE KEY")) out = out.replace(PRIVATE_KEY, `$1${REDACTED}$2`);
    if (out.includes("Bearer")) out = out.replace(BEARER, `$1$2${REDACTED}`);
    if (/authorization/i.test(out)) out = out.replace(AUTHORIZATION, `$1$2$3${REDACTED}`);
    if (out.includes("://") && out.includes("@")) out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
    if (MAY_ASSIGN.test(out)) out = out.replace(ASSIGNMENT, assignment);
    if (KEY_PREFIXES.some((prefix) => out.includes(prefix))) out = out.replace(KEY_FORMATS, REDACTED);
  }
  // A secret value that began right after a lone backslash (`\n` + `nsecret`) leaves `\[REDACTED]`, which is not JSON:
  // the backslash goes with it.
  if (replaced && out.includes(`\\${REDACTED}`)) out = out.replace(/(?<!\\)((?:\\\\)*)\\\[REDACTED\]/g, `$1${REDACTED}`);
  return out;
}

/**
 * `redactLine` with each secret's text (as it stands in the line) given to `replace` and put back as what it returns,
 * where `redactLine` puts `[REDACTED]`: the same secrets found the same way, kept in another form (sealed-secrets.ts
 * encrypts them). The line need not stay JSON: its reader puts the secrets back first.
 */
function replaceSecrets(line: string, secrets: readonly string[], replace: (secret: string) => string): string {
  let out = line;
  // One pass for all the values: what one replacement gives is never scanned for another value.
  const present = secrets.filter((secret) => out.includes(secret));
  if (present.length > 0) out = out.replace(new RegExp(present.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g"), replace);
  if (!MAY_HOLD_SECRET.test(out)) return out;
  const keep = (prefix: string, whole: string, suffix = "") => prefix + replace(whole.slice(prefix.length, whole.length - suffix.length)) + suffix;
  if (out.includes("PRIVATE KEY")) out = out.replace(PRIVATE_KEY, (m: string, begin: string, end: string) => keep(begin, m, end));
  if (out.includes("Bearer")) out = out.replace(BEARER, (m: string, a: string, b: string) => keep(a + b, m));
  if (/authorization/i.test(out)) out = out.replace(AUTHORIZATION, (m: string, a: string, b: string, c: string | undefined) => keep(a + b + (c ?? ""), m));
  if (out.includes("://") && out.includes("@")) out = out.replace(URL_CREDENTIALS, (m: string, a: string) => keep(a, m, "@"));
  if (MAY_ASSIGN.test(out)) {
    out = out.replace(ASSIGNMENT, (m: string, name: string, nameQuote: string | undefined, separator: string, valueQuote: string | undefined) =>
      nameQuote !== undefined && valueQuote === undefined ? m : keep(`${name}${nameQuote ?? ""}${separator}${valueQuote ?? ""}`, m),
    );
  }
  if (KEY_PREFIXES.some((prefix) => out.includes(prefix))) out = out.replace(KEY_FORMATS, (m: string) => replace(m));
  return out;
}

function assignment(match: string, name: string, nameQuote: string | undefined, separator: string, valueQuote: string | undefined): string {
  // A JSON or Python key (`"password": 5`) given no quoted value is structure, not a secret: leave it.
  if (nameQuote !== undefined && valueQuote === undefined) return match;
  return `${name}${nameQuote ?? ""}${separator}${valueQuote ?? ""}${REDACTED}`;
}

/** Redacts secrets in a plain string (an error message) the way `redactLine` does in a JSON line. */
export function redactText(text: string, secrets: readonly string[]): string {
  const line = JSON.stringify(text);
  const redacted = redactLine(line, secrets);
  if (redacted === line) return text;
  try {
    return JSON.parse(redacted) as string;
  } catch {
    return redacted.slice(1, -1); // not expected (redaction keeps JSON valid); the escaped text is still redacted
  }
}

/** Redacts secrets in any JSON-safe value, through its serialised text. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  const line = JSON.stringify(value);
  if (line === undefined) return value;
  const redacted = redactLine(line, secrets);
  if (redacted === line) return value;
  try {
    return JSON.parse(redacted) as T;
  } catch {
    return REDACTED as T; // not expected (redaction keeps JSON valid); nothing unredacted is given back
  }
}
