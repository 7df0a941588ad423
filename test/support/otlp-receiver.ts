import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as the test reads it, whichever OTLP encoding carried it. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  /** Start and end, epoch ms (nanoseconds on the wire). */
  readonly startMs: number;
  readonly endMs: number;
  /** The span's events, by name. */
  readonly events: string[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly serviceName: string | undefined;
  /** The exporting process's resource attributes (`process.pid`, …). */
  readonly resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Requests received, with their content type. */
  readonly requests: string[];
  /** Requests received, with their path and headers. */
  readonly received: { readonly path: string; readonly headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export interface OtlpReceiverOptions {
  /** The path spans are accepted on; any other answers 404. */
  readonly path?: string;
  /**
   * `ok`: a collector; `unavailable`: one that answers every export 503 (the exporter retries
   * it); `silent`: a blackhole that reads each export and never answers.
   */
  readonly behaviour?: 'ok' | 'unavailable' | 'silent';
}

/**
 * An OTLP/HTTP trace endpoint for tests: it decodes what the real exporter
 * sends, as JSON (`http/json`) or protobuf (`http/protobuf`), gzipped or not,
 * and keeps the spans.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const { path = '/v1/traces', behaviour = 'ok' } = options;
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const received: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((request, response) => {
    void readBody(request).then((raw) => {
      const type = request.headers['content-type'] ?? '';
      requests.push(type);
      received.push({ path: request.url ?? '', headers: request.headers });
      if (behaviour === 'silent') return;
      if (behaviour === 'unavailable') {
        response.writeHead(503).end();
        return;
      }
      if (request.url !== path) {
        response.writeHead(404).end();
        return;
      }
      const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      if (type.startsWith('application/json')) {
        spans.push(...fromJson(JSON.parse(body.toString('utf8')) as JsonRequest));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        spans.push(...fromProtobuf(body));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      }
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    received,
    close: () =>
      new Promise((closed) => {
        // A blackhole's connections are never answered: close them with it.
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
interface JsonAttribute {
  key: string;
  value: JsonValue;
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonAttribute[];
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
        events?: { name: string }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

function jsonAttributes(list: JsonAttribute[] = []): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    const found = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (found !== undefined)
      attributes[key] =
        typeof found === 'string' && value.intValue !== undefined ? Number(found) : found;
  }
  return attributes;
}

function fromJson(request: JsonRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    const serviceName = resource['service.name'];
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        attributes: jsonAttributes(span.attributes),
        startMs: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
        endMs: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
        events: (span.events ?? []).map((event) => event.name),
        statusCode: span.status?.code ?? 0,
        serviceName: serviceName === undefined ? undefined : String(serviceName),
        resource,
      })),
    );
  });
}

/** A protobuf message's fields by number: varints as bigint, length-delimited as bytes. */
type Fields = Map<number, (bigint | Buffer)[]>;

/** The protobuf wire format, as much of it as OTLP's trace messages use. */
function decode(bytes: Buffer): Fields {
  const fields: Fields = new Map();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = bytes[at++] as number;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    let value: bigint | Buffer;
    switch (key & 7) {
      case 0:
        value = varint();
        break;
      case 1:
        value = bytes.subarray(at, at + 8);
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        value = bytes.subarray(at, at + length);
        at += length;
        break;
      }
      case 5:
        value = bytes.subarray(at, at + 4);
        at += 4;
        break;
      default:
        throw new Error(`unsupported protobuf wire type ${key & 7}`);
    }
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

const messages = (fields: Fields, field: number): Fields[] =>
  (fields.get(field) ?? []).map((value) => decode(value as Buffer));
const bytesOf = (fields: Fields, field: number): Buffer =>
  (fields.get(field)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
const numberOf = (fields: Fields, field: number): number =>
  Number((fields.get(field)?.[0] as bigint | undefined) ?? 0n);

/** KeyValue { key = 1; AnyValue value = 2 }; AnyValue { string 1, bool 2, int 3, double 4 }. */
function protobufAttributes(list: Fields[]): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const pair of list) {
    const key = bytesOf(pair, 1).toString('utf8');
    const value = decode(bytesOf(pair, 2));
    if (value.has(1)) attributes[key] = bytesOf(value, 1).toString('utf8');
    else if (value.has(2)) attributes[key] = numberOf(value, 2) === 1;
    else if (value.has(3)) attributes[key] = numberOf(value, 3);
    else if (value.has(4)) attributes[key] = bytesOf(value, 4).readDoubleLE(0);
  }
  return attributes;
}

/** ExportTraceServiceRequest → ResourceSpans (1) → ScopeSpans (2) → Span (2). */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return messages(decode(body), 1).flatMap((resourceSpans) => {
    const message = messages(resourceSpans, 1)[0];
    const resource = message === undefined ? {} : protobufAttributes(messages(message, 1));
    const serviceName = resource['service.name'];
    return messages(resourceSpans, 2).flatMap((scope) =>
      messages(scope, 2).map((span) => ({
        traceId: bytesOf(span, 1).toString('hex'),
        spanId: bytesOf(span, 2).toString('hex'),
        parentSpanId: bytesOf(span, 4).toString('hex'),
        name: bytesOf(span, 5).toString('utf8'),
        kind: numberOf(span, 6),
        attributes: protobufAttributes(messages(span, 9)),
        startMs: Number(bytesOf(span, 7).readBigUInt64LE(0) / 1000n) / 1000,
        endMs: Number(bytesOf(span, 8).readBigUInt64LE(0) / 1000n) / 1000,
        // Event { time_unix_nano = 1; name = 2 }.
        events: messages(span, 11).map((event) => bytesOf(event, 2).toString('utf8')),
        // Status { message = 2; code = 3 }.
        statusCode: span.has(15) ? numberOf(decode(bytesOf(span, 15)), 3) : 0,
        serviceName: serviceName === undefined ? undefined : String(serviceName),
        resource,
      })),
    );
  });
}
