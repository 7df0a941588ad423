import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TraceIds } from '../tracing/tracing';

/**
 * The access line's fields as JSON, character for character what pino writes
 * for `{ req: request, res: reply, responseTime, client }` (and, on a traced
 * request, `trace_id` and `span_id`: OpenTelemetry's names in logs) through Fastify's
 * serializers (`asReqValue`, `asResValue` in fastify/lib/logger-pino.js):
 * built as one string, without the serializers' objects or pino's field loop
 * (ADR 0029). A spec holds it to pino's own line.
 */
export function accessFields(
  request: FastifyRequest,
  reply: FastifyReply,
  client: string,
  responseTime: number,
  trace?: TraceIds,
): string {
  const { method, url, headers, host, ip, socket } = request;
  // The fields in asReqValue's order; JSON.stringify leaves out those that are undefined.
  const version: unknown = headers['accept-version'];
  const port: number | undefined = socket?.remotePort;
  let req = `{"method":${JSON.stringify(method)},"url":${JSON.stringify(url)}`;
  if (version !== undefined) req += `,"version":${JSON.stringify(version)}`;
  if ((host as string | undefined) !== undefined) req += `,"host":${JSON.stringify(host)}`;
  if ((ip as string | undefined) !== undefined) req += `,"remoteAddress":${JSON.stringify(ip)}`;
  if (port !== undefined) req += `,"remotePort":${jsonNumber(port)}`;
  const line = `"req":${req}},"res":{"statusCode":${jsonNumber(reply.statusCode)}},"responseTime":${jsonNumber(responseTime)},"client":${JSON.stringify(client)}`;
  // Ids are hex digits: nothing in them needs escaping.
  return trace === undefined
    ? line
    : `${line},"trace_id":"${trace.traceId}","span_id":"${trace.spanId}"`;
}

/** A number as JSON writes it (`null` for NaN and the infinities, as pino does too). */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
