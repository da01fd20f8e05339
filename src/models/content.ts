/**
 * Content parts: what a user message (and a tool's result) holds besides plain text. Provider-neutral: each provider
 * maps them to its wire format (the OpenAI-compatible one: `image_url` data URLs; others their own image and file
 * blocks).
 *
 * In the engine, binary data is always base64 text (a message is a JSON value: it is traced, stored and sent as
 * such); `Uint8Array`s given to `query()` are turned into base64 when the run starts. The trace, transcript and stored
 * runs keep the bytes once each, by hash, in `.agent/blobs/`, and read them back.
 */

export interface TextPart {
  type: "text";
  text: string;
}

/** An image: base64 data (no `data:` prefix) or an http(s) URL the provider passes on. */
export interface ImagePart {
  type: "image";
  /** Base64 data, or a URL (`https:`, or a `data:` URL, which is split into its type and data). */
  image: string;
  /** `image/png`, `image/jpeg`, `image/gif`, `image/webp`; required for base64 data. */
  mediaType?: string;
}

/** A file (a PDF, a text file, …) as base64 data or a URL. */
export interface FilePart {
  type: "file";
  /** Base64 data, or a URL. */
  data: string;
  mediaType: string;
  filename?: string;
}

export type ContentPart = TextPart | ImagePart | FilePart;

/** What a caller may give for an image or file: bytes, base64 text, or a URL. */
export type BinaryInput = Uint8Array | string | URL;

/** A content part as `query()` takes it: images and files as bytes, base64 text or URLs. */
export type ContentPartInput = TextPart | { type: "image"; image: BinaryInput; mediaType?: string } | { type: "file"; data: BinaryInput; mediaType: string; filename?: string };

/** The text of a message's content: the string, or its text parts joined by blank lines. */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((part): part is TextPart => part.type === "text")
    .map((part) => part.text)
    .join("\n\n");
}

/** What a user message holds: text, or parts. */
export type UserContent = string | ContentPart[];

/** Where a part's bytes are: a URL the provider passes on, or base64 data with its media type. */
export type BinarySource = { kind: "url"; url: string } | { kind: "base64"; data: string; mediaType: string | undefined };

/**
 * Reads an image's or file's `image`/`data` field: an http(s) URL stays one, a `data:` URL is split into its media type
 * and base64 data (for providers that take them apart), anything else is base64 data with the part's media type.
 */
export function binarySource(value: string, mediaType: string | undefined): BinarySource {
  if (/^https?:/i.test(value)) return { kind: "url", url: value };
  const data = /^data:([^;,]+)?(;base64)?,(.*)$/is.exec(value);
  if (data) {
    const body = data[2] ? data[3]! : Buffer.from(decodeURIComponent(data[3]!), "utf8").toString("base64");
    return { kind: "base64", data: body, mediaType: data[1] ?? mediaType };
  }
  return { kind: "base64", data: value, mediaType };
}
