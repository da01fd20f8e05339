import type { KeyObject } from "node:crypto";
import { AgentError } from "../errors/agent-error.js";
import { gcmOpen, SealError, sealerWith, type SecretSealer } from "../record/sealed-secrets.js";
import { nodeCrypto, randomBytes } from "../util/node-crypto.js";

/**
 * Sealing what is queued (a run's input and options, in statecraft.runs and DBOS's workflow inputs) by processes that
 * do not hold the run key: whoever calls enqueueRun needs the database's URL, not the key that signs the workers'
 * runs (holding it could forge them). Workers publish an X25519 public key derived from their run key in
 * statecraft.meta; an enqueuer seals each secret to it (an ephemeral X25519 key, HKDF-SHA256, AES-256-GCM bound to
 * the run's scope), and only a worker can open it.
 */

/** statecraft.meta's row holding the workers' public key (base64url, 32 bytes). */
export const QUEUE_KEY_ROW = "run_queue_key";

const PKCS8_X25519 = Buffer.from("302e020100300506032b656e04220420", "hex");
const RAW = 32;
const IV = 12;
const TAG = 16;
const INFO = Buffer.from("statecraft/dbos queued secrets 1");

const rawPublic = (key: KeyObject) => Buffer.from(key.export({ format: "jwk" }).x as string, "base64url");

/** The X25519 key pair a run key's 32-byte seed gives: the same on every worker holding the key. */
export function queueKeyPair(seed: Buffer): { privateKey: KeyObject; publicKey: string } {
  const privateKey = nodeCrypto().createPrivateKey({ key: Buffer.concat([PKCS8_X25519, seed.subarray(0, RAW)]), format: "der", type: "pkcs8" });
  return { privateKey, publicKey: rawPublic(nodeCrypto().createPublicKey(privateKey)).toString("base64url") };
}

function publicKeyOf(text: string): KeyObject {
  const raw = Buffer.from(text, "base64url");
  if (raw.length !== RAW || raw.toString("base64url") !== text) {
    throw new AgentError("INVALID_OPTIONS", `statecraft.meta's ${QUEUE_KEY_ROW} is not an X25519 public key (32 bytes, base64url); delete the row and start a worker to write it again`);
  }
  return nodeCrypto().createPublicKey({ key: { kty: "OKP", crv: "X25519", x: text }, format: "jwk" });
}

const keyOf = (shared: Buffer, ephemeral: Buffer, recipient: Buffer) => Buffer.from(nodeCrypto().hkdfSync("sha256", shared, Buffer.concat([ephemeral, recipient]), INFO, 32));

/**
 * A sealer for a queued run's `scope`: `publicKey` seals (anyone may), `privateKey` (a worker's) also unseals. A
 * token is the ephemeral public key, the IV, the tag and the ciphertext.
 */
export function queueSealer(publicKey: string, scope: readonly unknown[], privateKey?: KeyObject): SecretSealer {
  const crypto = nodeCrypto();
  const recipient = publicKeyOf(publicKey);
  const recipientRaw = Buffer.from(publicKey, "base64url");
  const aad = Buffer.from(JSON.stringify(["statecraft/dbos queued run", ...scope]));
  return sealerWith({
    encrypt(plain) {
      const ephemeral = crypto.generateKeyPairSync("x25519");
      const ephemeralRaw = rawPublic(ephemeral.publicKey);
      const key = keyOf(crypto.diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient }), ephemeralRaw, recipientRaw);
      const iv = randomBytes(IV);
      const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(aad);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return Buffer.concat([ephemeralRaw, iv, cipher.getAuthTag(), body]);
    },
    decrypt(bytes) {
      if (privateKey === undefined) throw new SealError("it holds sealed secrets only a worker (holding the run key) can open");
      if (bytes.length < RAW + IV + TAG) throw new SealError("a sealed secret in it is cut short");
      const ephemeralRaw = bytes.subarray(0, RAW);
      let shared: Buffer;
      try {
        shared = crypto.diffieHellman({ privateKey, publicKey: crypto.createPublicKey({ key: { kty: "OKP", crv: "X25519", x: ephemeralRaw.toString("base64url") }, format: "jwk" }) });
      } catch {
        throw new SealError("a sealed secret in it is not one a worker of this database sealed (edited)");
      }
      const rest = bytes.subarray(RAW);
      return gcmOpen(keyOf(shared, ephemeralRaw, recipientRaw), aad, rest.subarray(0, IV), rest.subarray(IV, IV + TAG), rest.subarray(IV + TAG));
    },
  });
}
