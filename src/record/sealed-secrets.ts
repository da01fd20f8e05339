import { createHmac, nodeCrypto, randomBytes } from "../util/node-crypto.js";
import { redactLine, secretValues } from "./redact.js";

/**
 * Secrets kept at rest only encrypted: a stored run holds the real conversation and call inputs (resume must be
 * exact), so what redaction would hide is written instead as `[SEALED:<hex>]`, AES-256-GCM under a key only the
 * engine holds (derived from the session key, or a worker's run key), bound to the run's scope (its workspace and
 * session, or its database run). `unseal` gives the text back exactly. The text `[SEALED:` itself is written
 * `[SEALED:]`, so a model that copies a token it saw into the conversation gets that text back, never a secret.
 */
export interface SecretSealer {
  seal(text: string): string;
  /** The text as it was sealed; throws when a token was not made with this key for this scope (edited, copied). */
  unseal(text: string): string;
}

const OPEN = "[SEALED:";
const TOKEN = /\[SEALED:([0-9a-f]*)\]/g;
const IV = 12;
const TAG = 16;

export class SealError extends Error {}

export function secretSealer(secret: Buffer, scope: readonly unknown[], secrets: readonly string[] = secretValues()): SecretSealer {
  const key = createHmac("sha256", secret).update("statecraft sealed secrets 1").digest();
  const aad = Buffer.from(JSON.stringify(scope));
  const token = (plain: string) => {
    const iv = randomBytes(IV);
    const cipher = nodeCrypto().createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `${OPEN}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("hex")}]`;
  };
  const open = (hex: string): string => {
    const bytes = Buffer.from(hex, "hex");
    if (bytes.length < IV + TAG || hex.length % 2 !== 0) throw new SealError("a sealed secret in it is cut short");
    try {
      const decipher = nodeCrypto().createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV));
      decipher.setAAD(aad);
      decipher.setAuthTag(bytes.subarray(IV, IV + TAG));
      return Buffer.concat([decipher.update(bytes.subarray(IV + TAG)), decipher.final()]).toString("utf8");
    } catch {
      throw new SealError("a sealed secret in it was not sealed with this key for this run (edited, or copied from elsewhere)");
    }
  };
  // Sealed text may be sealed again by a later pattern (`API_KEY=` before a token): what a token holds is sealed text.
  const unseal = (text: string, depth: number): string => {
    if (!text.includes(OPEN)) return text;
    if (depth > 8) throw new SealError("its sealed secrets nest too deep");
    return text.replace(TOKEN, (_m, hex: string) => (hex === "" ? OPEN : unseal(open(hex), depth + 1)));
  };
  return {
    seal: (text) => redactLine(text.includes(OPEN) ? text.split(OPEN).join(`${OPEN}]`) : text, secrets, token),
    unseal: (text) => unseal(text, 0),
  };
}
