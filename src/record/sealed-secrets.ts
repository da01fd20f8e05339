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

/** How a sealer turns a secret into the bytes of its token and back (decrypt throws SealError for a bad token). */
export interface SealCipher {
  encrypt(plain: string): Buffer;
  decrypt(bytes: Buffer): string;
}

export function secretSealer(secret: Buffer, scope: readonly unknown[], secrets: readonly string[] = secretValues()): SecretSealer {
  const key = createHmac("sha256", secret).update("statecraft sealed secrets 1").digest();
  const aad = Buffer.from(JSON.stringify(scope));
  return sealerWith(
    {
      encrypt(plain) {
        const iv = randomBytes(IV);
        const cipher = nodeCrypto().createCipheriv("aes-256-gcm", key, iv);
        cipher.setAAD(aad);
        const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
        return Buffer.concat([iv, cipher.getAuthTag(), body]);
      },
      decrypt(bytes) {
        if (bytes.length < IV + TAG) throw new SealError("a sealed secret in it is cut short");
        return gcmOpen(key, aad, bytes.subarray(0, IV), bytes.subarray(IV, IV + TAG), bytes.subarray(IV + TAG));
      },
    },
    secrets,
  );
}

/** AES-256-GCM decryption; a wrong key, scope or edited byte is a SealError. */
export function gcmOpen(key: Buffer, aad: Buffer, iv: Buffer, tag: Buffer, body: Buffer): string {
  try {
    const decipher = nodeCrypto().createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    throw new SealError("a sealed secret in it was not sealed with this key for this run (edited, or copied from elsewhere)");
  }
}

/** A sealer whose tokens `cipher` makes and opens: what redaction would hide becomes `[SEALED:<hex>]`. */
export function sealerWith(cipher: SealCipher, secrets: readonly string[] = secretValues()): SecretSealer {
  const token = (plain: string) => `${OPEN}${cipher.encrypt(plain).toString("hex")}]`;
  const open = (hex: string): string => {
    if (hex.length % 2 !== 0) throw new SealError("a sealed secret in it is cut short");
    return cipher.decrypt(Buffer.from(hex, "hex"));
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

/**
 * A JSON value with its secrets sealed, as its JSON text is (the patterns see keys and values together, as the
 * transcript's redaction does); tokens sit inside JSON strings, so the text stays JSON.
 */
export function sealJson<T>(sealer: SecretSealer, value: T): T {
  const text = JSON.stringify(value);
  return text === undefined ? value : (JSON.parse(sealer.seal(text)) as T);
}

/** The JSON value sealJson was given, exactly. */
export function unsealJson<T>(sealer: SecretSealer, value: T): T {
  const text = JSON.stringify(value);
  return text === undefined ? value : (JSON.parse(sealer.unseal(text)) as T);
}
