import { AgentError } from "../errors/agent-error.js";
import type { ContentPart, UserContent } from "../models/content.js";
import type { Message } from "../models/messages.js";
import { isBlobHash, sha256Hex, type BlobStore } from "./blobs.js";

/**
 * Image and file parts as records keep them: the bytes in the blob store, the part naming them by hash. The engine's
 * own parts hold base64 text (content.ts); a record (trace line, transcript line, stored run) holds this instead, so
 * a run that shows the same image ten times writes its bytes once and no line carries them. URLs stay URLs.
 *
 * `{ type: "image", blob: "sha256:<hex>", mediaType?, bytes }` and `{ type: "file", blob, mediaType, filename?, bytes }`
 * (`bytes`: the size, for readers).
 */
export interface BlobImagePart {
  type: "image";
  blob: string;
  mediaType?: string;
  bytes: number;
}
export interface BlobFilePart {
  type: "file";
  blob: string;
  mediaType: string;
  filename?: string;
  bytes: number;
}
export type BlobPart = BlobImagePart | BlobFilePart;

/** A part as a record holds it. */
export type RecordedPart = ContentPart | BlobPart;

const PREFIX = "sha256:";

/**
 * Base64 text → its hash and size, for the last texts seen: the same image is in the trace's first line, the
 * transcript and each checkpoint of the stored run, and is hashed once. Bounded by count and by characters (the
 * texts are the map's keys), so a run's large images are not kept alive by it for long after the run.
 */
const recent = new Map<string, { hash: string; size: number } | null>();
const RECENT = 32;
const RECENT_CHARS = 32 * 1024 * 1024;
let recentChars = 0;

function blobOf(data: string): { hash: string; size: number; bytes?: Buffer } | undefined {
  const known = recent.get(data);
  if (known !== undefined) return known ?? undefined;
  const bytes = Buffer.from(data, "base64");
  // Only text that is exactly the base64 of its bytes: anything else (unpadded, odd) is kept as it is, so reading the
  // record back gives the very text the model was sent.
  const blob = bytes.toString("base64") === data && data !== "" ? { hash: sha256Hex(bytes), size: bytes.length } : null;
  while (recent.size > 0 && (recent.size >= RECENT || recentChars + data.length > RECENT_CHARS)) {
    const oldest = recent.keys().next().value!;
    recent.delete(oldest);
    recentChars -= oldest.length;
  }
  if (data.length <= RECENT_CHARS) {
    recent.set(data, blob);
    recentChars += data.length;
  }
  return blob ? { ...blob, bytes } : undefined;
}

/** Whether a part's data is base64 (not a URL): what goes to the blob store. */
const isInline = (value: unknown): value is string => typeof value === "string" && !/^(?:https?|data):/i.test(value);

function partHasData(part: ContentPart): boolean {
  if (part === null || typeof part !== "object") return false;
  return (part.type === "image" && isInline(part.image)) || (part.type === "file" && isInline(part.data));
}

/**
 * Puts a blob in the store; false when the store could not keep it (a full disk): the part is then written with its
 * data, as before blobs, and the store's owner has heard why (`reportingBlobs`).
 */
function kept(blobs: BlobStore, blob: { hash: string; bytes?: Buffer }, data: string): boolean {
  try {
    if (!blobs.has?.(blob.hash)) blobs.put(blob.hash, blob.bytes ?? Buffer.from(data, "base64"));
    return true;
  } catch {
    return false;
  }
}

/** The parts with their base64 data in `blobs`; the same list when none has any. */
export function partsToBlobs(parts: readonly ContentPart[], blobs: BlobStore): RecordedPart[] {
  if (!parts.some(partHasData)) return parts as RecordedPart[];
  return parts.map((part): RecordedPart => {
    if (!partHasData(part)) return part;
    if (part.type === "image" && isInline(part.image)) {
      const blob = blobOf(part.image);
      if (!blob || !kept(blobs, blob, part.image)) return part;
      const { image: _data, type, ...rest } = part;
      return { type, blob: PREFIX + blob.hash, ...rest, bytes: blob.size };
    }
    if (part.type === "file" && isInline(part.data)) {
      const blob = blobOf(part.data);
      if (!blob || !kept(blobs, blob, part.data)) return part;
      const { data: _data, type, ...rest } = part;
      return { type, blob: PREFIX + blob.hash, ...rest, bytes: blob.size };
    }
    return part;
  });
}

/** A user message's content (or a run's request) as a record keeps it. */
export function contentToBlobs(content: UserContent, blobs: BlobStore): string | RecordedPart[] {
  return typeof content === "string" ? content : partsToBlobs(content, blobs);
}

/** A message as a record keeps it: the same object when it has no binary data. */
export function messageToBlobs(message: Message, blobs: BlobStore): Message {
  if (message.role === "user" && typeof message.content !== "string") {
    const content = partsToBlobs(message.content, blobs);
    return content === message.content ? message : ({ ...message, content } as Message);
  }
  if (message.role === "tool" && message.parts) {
    const parts = partsToBlobs(message.parts, blobs);
    return parts === message.parts ? message : ({ ...message, parts } as Message);
  }
  return message;
}

/** Messages as a record keeps them: the same list when none has binary data. */
export function messagesToBlobs(messages: readonly Message[], blobs: BlobStore): Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const stored = messageToBlobs(messages[i], blobs);
    if (stored !== messages[i]) (out ??= messages.slice())[i] = stored;
  }
  return out ?? (messages as Message[]);
}

const isBlobPart = (part: unknown): part is BlobPart =>
  part !== null && typeof part === "object" && ((part as BlobPart).type === "image" || (part as BlobPart).type === "file") && typeof (part as BlobPart).blob === "string";

/** The hash a reference names, or an error naming what is wrong with it. */
function hashOf(reference: string, where: string): string {
  const hash = reference.startsWith(PREFIX) ? reference.slice(PREFIX.length) : "";
  if (!isBlobHash(hash)) throw new AgentError("BLOB_NOT_FOUND", `${where}: ${JSON.stringify(reference)} is not a blob reference ("sha256:" and 64 hex digits)`);
  return hash;
}

/**
 * Parts as a record holds them, with each reference's bytes read back (and checked against its hash) as base64: the
 * parts the engine had. Anything that is not a list is given back as it is (the record's reader checks shapes).
 */
export function partsFromBlobs<T>(parts: T, blobs: BlobStore | undefined, where = "a recorded part"): T {
  if (!Array.isArray(parts) || !parts.some(isBlobPart)) return parts;
  return parts.map((part: unknown) => {
    if (!isBlobPart(part)) return part;
    if (blobs === undefined) throw new AgentError("BLOB_NOT_FOUND", `${where} names the blob ${part.blob}, and no blob store was given to read it from`);
    const data = blobs.get(hashOf(part.blob, where)).toString("base64");
    const { type, blob: _blob, bytes: _bytes, ...rest } = part;
    return type === "image" ? { type, image: data, ...rest } : { type, data, ...rest };
  }) as T;
}

/** A recorded message with its parts' bytes read back. */
export function messageFromBlobs<T>(message: T, blobs: BlobStore | undefined, where = "a recorded message"): T {
  if (message === null || typeof message !== "object") return message;
  const m = message as { role?: unknown; content?: unknown; parts?: unknown };
  if (m.role === "user" && Array.isArray(m.content)) {
    const content = partsFromBlobs(m.content, blobs, where);
    return content === m.content ? message : { ...message, content };
  }
  if (m.role === "tool" && Array.isArray(m.parts)) {
    const parts = partsFromBlobs(m.parts, blobs, where);
    return parts === m.parts ? message : { ...message, parts };
  }
  return message;
}

/** Recorded messages with their parts' bytes read back: the same list when none names a blob. */
export function messagesFromBlobs<T>(messages: readonly T[], blobs: BlobStore | undefined, where = "a recorded message"): T[] {
  let out: T[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const read = messageFromBlobs(messages[i], blobs, where);
    if (read !== messages[i]) (out ??= messages.slice())[i] = read;
  }
  return out ?? (messages as T[]);
}
