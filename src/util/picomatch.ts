import { createRequire } from "node:module";
import type Picomatch from "picomatch";

const require = createRequire(import.meta.url);
let loaded: typeof Picomatch | undefined;

/**
 * picomatch, required by the first pattern compiled rather than when statecraft is imported (it is CommonJS and
 * synchronous, so rule parsing stays synchronous).
 */
export function picomatch(glob: string, options?: Picomatch.PicomatchOptions): Picomatch.Matcher {
  loaded ??= require("picomatch") as typeof Picomatch;
  return loaded(glob, options);
}
