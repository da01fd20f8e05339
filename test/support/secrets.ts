/**
 * Secret payloads for the redaction tests: each is text a tool might read or write (a file, a command, a response),
 * with the parts of it that must never reach a trace, audit line, transcript, inspector record or error message.
 */
export interface SecretPayload {
  name: string;
  /** The text as a tool sees it. */
  text: string;
  /** What must not appear in any sink, in any escaping. */
  secrets: string[];
  /** Environment variables the run has (their values are secrets because of their names). */
  env?: Record<string, string>;
}

const PEM_BODY = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo"];
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END RSA PRIVATE KEY-----`;
const OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";

export const SECRET_PAYLOADS: SecretPayload[] = [
  { name: "URL credentials (https)", text: "git clone https://alice:Tr0ub4dor-3xample@git.example.test/team/repo.git", secrets: ["Tr0ub4dor-3xample"] },
  { name: "URL credentials (postgres, @ in the password)", text: "DATABASE=postgres://app:pg-S3cret@9f8e@db.internal:5432/app", secrets: ["pg-S3cret", "9f8e@db"] },
  { name: "URL credentials (a token as the user)", text: "remote: https://x-token-value-42:x-oauth-basic@example.test/r.git", secrets: ["x-token-value-42"] },
  { name: "Authorization: Basic at a line start", text: "GET / HTTP/1.1\nAuthorization: Basic YWxpY2U6c2VjcmV0LXB3ZA==\nAccept: */*", secrets: ["YWxpY2U6c2VjcmV0LXB3ZA"] },
  { name: "Authorization: Bearer after a tab", text: "headers:\n\tAuthorization: Bearer opaque-bearer-7c1d9e2f\n", secrets: ["opaque-bearer-7c1d9e2f"] },
  { name: "Authorization header in JSON", text: '{"headers":{"Authorization":"Basic Ym9iOmh1bnRlcjI="}}', secrets: ["Ym9iOmh1bnRlcjI"] },
  { name: "Bearer token at a line start", text: "token follows\nBearer opaque-token-5a6b7c8d9e", secrets: ["opaque-token-5a6b7c8d9e"] },
  { name: "OpenAI key at a line start", text: `keys:\nsk-proj-${"Q7".repeat(22)}\nend`, secrets: [`${"Q7".repeat(22)}`] },
  { name: "GitHub token after a tab", text: `values\n\tghp_${"a1B2".repeat(9)}`, secrets: [`${"a1B2".repeat(9)}`] },
  { name: "Stripe live secret key", text: `stripe = sk_live_${"51Hx".repeat(6)}`, secrets: [`${"51Hx".repeat(6)}`] },
  { name: "Stripe test and restricted keys", text: `sk_test_${"4eC3".repeat(6)} rk_live_${"9Zq1".repeat(6)}`, secrets: [`${"4eC3".repeat(6)}`, `${"9Zq1".repeat(6)}`] },
  { name: "PEM private key", text: `cat id_rsa\n${PEM}\n`, secrets: PEM_BODY },
  { name: "PEM private key cut off", text: `head -3 key\n-----BEGIN OPENSSH PRIVATE KEY-----\n${OPENSSH_BODY}`, secrets: [OPENSSH_BODY] },
  { name: "JSON Web Token", text: "cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", secrets: ["dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"] },
  { name: "secret-named assignments in a .env file", text: "DEBUG=1\nAPI_TOKEN=tok-1234567890abcdef\nDB_PASS='p4ss w0rd-db'\nexport MYSQL_PWD=\"mysql-pwd-31337\"\n", secrets: ["tok-1234567890abcdef", "p4ss w0rd-db", "mysql-pwd-31337"] },
  { name: "secret-named keys in JSON", text: '{"user":"bob","client_secret":"cs-abcdef123456","password":"correct horse battery"}', secrets: ["cs-abcdef123456", "correct horse battery"] },
  {
    name: "environment values of DB_PASS, MYSQL_PWD, *_CREDENTIALS, *_PASSWD",
    text: "connect db-pass-value-1 mysql-pwd-value-2 creds-value-3 smtp-passwd-value-4",
    secrets: ["db-pass-value-1", "mysql-pwd-value-2", "creds-value-3", "smtp-passwd-value-4"],
    env: { DB_PASS: "db-pass-value-1", MYSQL_PWD: "mysql-pwd-value-2", SERVICE_CREDENTIALS: "creds-value-3", SMTP_PASSWD: "smtp-passwd-value-4" },
  },
  {
    name: 'an environment value holding " and \\',
    text: 'the password is pa"ss\\w0rd-42! and the key q"uo\\te-key-9',
    secrets: ['pa"ss\\w0rd-42!', 'q"uo\\te-key-9'],
    env: { APP_PASSWORD: 'pa"ss\\w0rd-42!', SIGNING_KEY: 'q"uo\\te-key-9' },
  },
];

/** `secret` as it may appear in a sink: raw, and JSON-escaped once, twice and three times. */
export function escapings(secret: string): string[] {
  const forms = new Set([secret]);
  let escaped = secret;
  for (let i = 0; i < 3; i++) forms.add((escaped = JSON.stringify(escaped).slice(1, -1)));
  return [...forms];
}

/** The secrets of `payload` found in `text`, in any escaping (empty when none got through). */
export function leaks(text: string, payload: SecretPayload): string[] {
  return payload.secrets.filter((secret) => escapings(secret).some((form) => text.includes(form)));
}
