import type { FileHandle } from "node:fs/promises";

/** Bytes inspected to tell text from binary (as git does: a NUL byte in the first 8 000 bytes means binary). */
const SNIFF_BYTES = 8_000;

/** Whether `buffer` (the start of a file) looks binary. */
export function looksBinary(buffer: Uint8Array): boolean {
  const end = Math.min(buffer.length, SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (buffer[i] === 0) return true;
  return false;
}

/** Reads the first bytes of an open file and says whether it looks binary. */
export async function isBinaryFile(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
  return looksBinary(buffer.subarray(0, bytesRead));
}

/** A node error's code (`ENOENT`, `EISDIR`…), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined;
}

/** `12 bytes`, `3.4 KB`, `5.0 MB`: sizes in messages a model reads. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
