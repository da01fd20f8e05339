import { createRequire } from "node:module";

type NodeCrypto = typeof import("node:crypto");
let loaded: NodeCrypto | undefined;

/**
 * `node:crypto`, required on first use rather than when statecraft is imported: loading it (and the streams it
 * brings) was a tenth of `import("statecraft")`, and a program that never starts a run needs none of it.
 */
export function nodeCrypto(): NodeCrypto {
  return (loaded ??= createRequire(import.meta.url)("node:crypto") as NodeCrypto);
}

export const randomUUID: NodeCrypto["randomUUID"] = (options) => nodeCrypto().randomUUID(options);
export const randomBytes = ((size: number) => nodeCrypto().randomBytes(size)) as (size: number) => Buffer;
export const createHash = ((algorithm: string) => nodeCrypto().createHash(algorithm)) as (algorithm: string) => import("node:crypto").Hash;
export const createHmac = ((algorithm: string, key: import("node:crypto").BinaryLike | import("node:crypto").KeyObject) => nodeCrypto().createHmac(algorithm, key)) as (
  algorithm: string,
  key: import("node:crypto").BinaryLike | import("node:crypto").KeyObject,
) => import("node:crypto").Hmac;
export const timingSafeEqual: NodeCrypto["timingSafeEqual"] = (a, b) => nodeCrypto().timingSafeEqual(a, b);
