/**
 * The environment a run's processes get by default: this process's, less what names a secret. Provider keys, cloud
 * credentials, tokens and database passwords sit in the environment of the process that runs the agent; a command the
 * agent runs (or a script it wrote, or `npm test`) would otherwise print them with `env`.
 */

/** Any part of the name says it holds a secret: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, `SSH_AUTH_SOCK`, … */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|CREDS|COOKIE|(^|_)AUTH|PRIVATE|SIGNATURE|^PW$|_PW$|_PWD$|_PASS$/i;
/** Whole families: the engine's own, the durable host's, libpq's, the clouds' and the model providers'. */
const SECRET_PREFIX = /^(STATECRAFT_|DBOS_|PG|AWS_|AZURE_|GOOGLE_|GCLOUD_|CLOUDSDK_|OPENAI_|ANTHROPIC_|GEMINI_|MISTRAL_|GROQ_|COHERE_|DEEPSEEK_|XAI_|OPENROUTER_|TOGETHER_|FIREWORKS_|HF_|HUGGINGFACE|REPLICATE_|PERPLEXITY_|VOYAGE_|NPM_CONFIG__?AUTH|npm_config__?auth)/i;
/** A URL carrying credentials (`scheme://user:password@host`, `https://token@host`), anywhere in a value. */
const URL_WITH_CREDENTIALS = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*(:[^\s/@]*)?@/i;

/** Whether the scrub drops `name=value` (before `pass` lifts it). */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  if (SECRET_NAME.test(name) || SECRET_PREFIX.test(name)) return true;
  return value !== undefined && URL_WITH_CREDENTIALS.test(value);
}

export interface ScrubOptions {
  /** Names kept although they look secret. */
  pass?: readonly string[];
  /** Variables set after the scrub. */
  set?: Readonly<Record<string, string>>;
}

/** `base` without the variables that look secret, `pass` kept, `set` set. `base` is not changed. */
export function scrubEnvironment(base: NodeJS.ProcessEnv, options: ScrubOptions = {}): NodeJS.ProcessEnv {
  const pass = new Set(options.pass ?? []);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (!pass.has(name) && isSecretVariable(name, value)) continue;
    env[name] = value;
  }
  for (const [name, value] of Object.entries(options.set ?? {})) env[name] = value;
  return env;
}
