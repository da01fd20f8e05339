/**
 * A recorded request as one line of text for people (`trace list`, `trace show`): its text, or its parts with each
 * image or file named (`[image image/png, 70 bytes]`). Undefined when the line holds no request.
 */
export function requestText(input: unknown): string | undefined {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return undefined;
  return input
    .map((part: unknown) => {
      const p = (part ?? {}) as { type?: unknown; text?: unknown; mediaType?: unknown; bytes?: unknown; image?: unknown; filename?: unknown };
      if (p.type === "text") return typeof p.text === "string" ? p.text : "";
      const size = typeof p.bytes === "number" ? `, ${p.bytes} bytes` : "";
      const url = typeof p.image === "string" && /^https?:/i.test(p.image) ? ` ${p.image}` : "";
      const name = typeof p.filename === "string" ? ` ${p.filename}` : "";
      return `[${String(p.type)}${name}${url}${typeof p.mediaType === "string" ? ` ${p.mediaType}` : ""}${size}]`;
    })
    .join(" ");
}
