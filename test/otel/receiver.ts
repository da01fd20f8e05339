import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as the receiver decoded it from either OTLP encoding. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: string[];
  links: Array<{ traceId: string; spanId: string }>;
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
}

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 (`POST /v1/traces`): it decodes what exporters send, JSON
 * (`application/json`) or protobuf (`application/x-protobuf`, read with the wire format below), and keeps the spans.
 */
export async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      contentTypes.push(type);
      if (req.url !== "/v1/traces" || req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      if (type.startsWith("application/json")) {
        spans.push(...fromJson(JSON.parse(body.toString("utf8"))));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else {
        spans.push(...fromProtobuf(body));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

// ---- OTLP JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ids as hex strings.

type JsonValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: JsonValue[] } };
const jsonValue = (v: JsonValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? (v.arrayValue ? (v.arrayValue.values ?? []).map(jsonValue) : undefined);
const jsonAttributes = (list: Array<{ key: string; value: JsonValue }> = []) => Object.fromEntries(list.map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(request: { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, never>> }> }> }): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const span = s as unknown as { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: []; events?: Array<{ name: string }>; links?: Array<{ traceId: string; spanId: string }> };
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          name: span.name,
          kind: span.kind,
          attributes: jsonAttributes(span.attributes),
          events: (span.events ?? []).map((e) => e.name),
          links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          resource,
        });
      }
    }
  }
  return out;
}

// ---- OTLP protobuf: the wire format (varints, length-delimited fields) and the field numbers of
// opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto.

type Field = { no: number; wire: number; value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[i++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, wire, value: buf.subarray(i, i + length) });
      i += length;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`protobuf: wire type ${wire} at ${i}`);
  }
  return out;
}
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no).map((f) => f.value);
const bytes = (fs: Field[], no: number) => (all(fs, no)[0] as Buffer | undefined) ?? Buffer.alloc(0);
const text = (fs: Field[], no: number) => bytes(fs, no).toString("utf8");

function anyValue(buf: Buffer): unknown {
  const f = fields(buf)[0];
  if (!f) return undefined;
  switch (f.no) {
    case 1:
      return (f.value as Buffer).toString("utf8");
    case 2:
      return f.value !== 0n;
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint));
    case 4:
      return (f.value as Buffer).readDoubleLE(0);
    case 5:
      return all(fields(f.value as Buffer), 1).map((v) => anyValue(v as Buffer));
    default:
      return undefined;
  }
}
const protoAttributes = (list: Array<bigint | Buffer>) =>
  Object.fromEntries(list.map((kv) => fields(kv as Buffer)).map((kv) => [text(kv, 1), anyValue(bytes(kv, 2))]));

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1).map((b) => fields(b as Buffer))) {
    const resource = protoAttributes(all(fields(bytes(rs, 1)), 1));
    for (const ss of all(rs, 2).map((b) => fields(b as Buffer))) {
      for (const s of all(ss, 2).map((b) => fields(b as Buffer))) {
        out.push({
          traceId: bytes(s, 1).toString("hex"),
          spanId: bytes(s, 2).toString("hex"),
          parentSpanId: bytes(s, 4).toString("hex"),
          name: text(s, 5),
          kind: Number(all(s, 6)[0] ?? 0n),
          attributes: protoAttributes(all(s, 9)),
          events: all(s, 11).map((e) => text(fields(e as Buffer), 2)),
          links: all(s, 13).map((l) => fields(l as Buffer)).map((l) => ({ traceId: bytes(l, 1).toString("hex"), spanId: bytes(l, 2).toString("hex") })),
          resource,
        });
      }
    }
  }
  return out;
}

/** The received spans as an indented tree of names, siblings by name. */
export function receivedTree(spans: readonly ReceivedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    // Siblings by name: the exporter sends spans in batches, in the order they ended.
    const children = spans.filter((s) => (ids.has(s.parentSpanId) ? s.parentSpanId : "") === parent).sort((a, b) => a.name.localeCompare(b.name));
    for (const span of children) {
      lines.push(`${"  ".repeat(depth)}${span.name}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk("", 0);
  return lines.join("\n");
}
