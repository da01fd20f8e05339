import { AgentError } from "../../errors/agent-error.js";
import type { ContentPart } from "../content.js";
import type { Message } from "../messages.js";
import type { WireContentPart } from "./wire-types.js";

/**
 * Content parts as Chat Completions takes them: text as `text`, an image as `image_url` (its URL, or a
 * `data:<type>;base64,` URL of its bytes), a file as `file` with `file_data` (a data URL) or `file_url`.
 */
export function toWireParts(parts: readonly ContentPart[]): WireContentPart[] {
  return parts.map((part): WireContentPart => {
    switch (part.type) {
      case "text":
        return { type: "text", text: part.text };
      case "image":
        return { type: "image_url", image_url: { url: isUrl(part.image) ? part.image : dataUrl(part.mediaType, part.image, "image") } };
      case "file":
        return {
          type: "file",
          file: { ...(isUrl(part.data) ? { file_url: part.data } : { file_data: dataUrl(part.mediaType, part.data, "file") }), ...(part.filename ? { filename: part.filename } : {}) },
        };
    }
  });
}

/** A user message's content on the wire: a plain string stays one (servers without parts support still take it). */
export function toWireContent(content: string | readonly ContentPart[]): string | WireContentPart[] {
  return typeof content === "string" ? content : toWireParts(content);
}

function isUrl(value: string): boolean {
  return /^(https?|data):/i.test(value);
}

function dataUrl(mediaType: string | undefined, base64: string, what: string): string {
  if (!mediaType) throw new AgentError("INVALID_OPTIONS", `an ${what} part given as base64 data needs its mediaType (e.g. "image/png")`);
  return `data:${mediaType};base64,${base64}`;
}

/** Whether a request sends images or files: a server that refuses it is told apart from other bad requests. */
export function carriesMedia(messages: readonly Message[]): boolean {
  return messages.some((m) => (m.role === "user" && typeof m.content !== "string" && m.content.some((p) => p.type !== "text")) || (m.role === "tool" && m.parts?.some((p) => p.type !== "text")));
}

/** Said after a 4xx answer to a request with images or files. */
export const MEDIA_REFUSED = " (the request carried images or files: this model or server may not take them; use a vision model, or leave the images out)";
