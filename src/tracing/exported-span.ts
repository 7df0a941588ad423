import { SpanKind, SpanStatusCode, TraceFlags, type SpanContext } from '@opentelemetry/api';
import {
  hrTimeDuration,
  millisToHrTime,
  TraceState,
  type InstrumentationScope,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import type { ThreadSpanRecord } from '@corepool/core/host';

/**
 * A finished span as the main thread posts it to the export thread
 * (`span-export-thread.ts`): what the OTLP exporters read, as a flat tuple.
 * A structured clone copies an object's keys with every object: spans as
 * objects made posting a batch the main thread's largest tracing cost (ADR 0048).
 * The resource and scope are the process's own, set on the export thread.
 */
export type ExportedSpan = readonly [
  name: string,
  kind: SpanKind,
  traceId: string,
  spanId: string,
  traceFlags: number,
  traceState: string | undefined,
  parentSpanId: string | undefined,
  parentIsRemote: boolean | undefined,
  startSeconds: number,
  startNanos: number,
  endSeconds: number,
  endNanos: number,
  statusCode: SpanStatusCode,
  statusMessage: string | undefined,
  attributes: ReadableSpan['attributes'],
  events: TimedEvent[],
  links: readonly ExportedLink[],
  droppedAttributes: number,
  droppedEvents: number,
  droppedLinks: number,
];

type ExportedLink = readonly [
  traceId: string,
  spanId: string,
  traceFlags: number,
  traceState: string | undefined,
  isRemote: boolean | undefined,
  attributes: ReadableSpan['attributes'] | undefined,
];

const NONE: [] = [];

/** A span the main thread's SDK made. */
export function exportedSpanOf(span: ReadableSpan): ExportedSpan {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  return [
    span.name,
    span.kind,
    context.traceId,
    context.spanId,
    context.traceFlags,
    context.traceState?.serialize(),
    parent?.spanId,
    parent?.isRemote,
    span.startTime[0],
    span.startTime[1],
    span.endTime[0],
    span.endTime[1],
    span.status.code,
    span.status.message,
    span.attributes,
    span.events,
    span.links.length === 0
      ? NONE
      : span.links.map(({ context: linked, attributes }) => [
          linked.traceId,
          linked.spanId,
          linked.traceFlags,
          linked.traceState?.serialize(),
          linked.isRemote,
          attributes,
        ]),
    span.droppedAttributesCount,
    span.droppedEventsCount,
    span.droppedLinksCount,
  ];
}

const STATUS_CODES = {
  unset: SpanStatusCode.UNSET,
  ok: SpanStatusCode.OK,
  error: SpanStatusCode.ERROR,
} as const;

/** A span a task's thread recorded (`thread-trace.ts`): its ids and times kept, its parent the task's `schedule` span. */
export function exportedThreadSpanOf(record: ThreadSpanRecord, traceId: string): ExportedSpan {
  const [startSeconds, startNanos] = millisToHrTime(record.startMs);
  const [endSeconds, endNanos] = millisToHrTime(record.endMs);
  return [
    record.name,
    SpanKind.INTERNAL,
    traceId,
    record.spanId,
    TraceFlags.SAMPLED,
    undefined,
    record.parentSpanId,
    false,
    startSeconds,
    startNanos,
    endSeconds,
    endNanos,
    STATUS_CODES[record.status],
    record.statusMessage,
    record.attributes,
    record.events.length === 0
      ? NONE
      : record.events.map((event) => ({
          name: event.name,
          time: millisToHrTime(event.timeMs),
          attributes: event.attributes,
        })),
    NONE,
    0,
    0,
    0,
  ];
}

/** Back into the SDK's shape, on the export thread, for its batch processor and exporters. */
export function readableOf(
  span: ExportedSpan,
  resource: Resource,
  scope: InstrumentationScope,
): ReadableSpan {
  const [
    name,
    kind,
    traceId,
    spanId,
    traceFlags,
    traceState,
    parentSpanId,
    parentIsRemote,
    startSeconds,
    startNanos,
    endSeconds,
    endNanos,
    statusCode,
    statusMessage,
    attributes,
    events,
    links,
    droppedAttributesCount,
    droppedEventsCount,
    droppedLinksCount,
  ] = span;
  const context = spanContextOf(traceId, spanId, traceFlags, traceState, undefined);
  const startTime: [number, number] = [startSeconds, startNanos];
  const endTime: [number, number] = [endSeconds, endNanos];
  return {
    name,
    kind,
    spanContext: () => context,
    parentSpanContext:
      parentSpanId === undefined
        ? undefined
        : { ...context, spanId: parentSpanId, isRemote: parentIsRemote },
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: { code: statusCode, message: statusMessage },
    attributes,
    links: links.map(([linkTraceId, linkSpanId, flags, state, isRemote, linkAttributes]) => ({
      context: spanContextOf(linkTraceId, linkSpanId, flags, state, isRemote),
      attributes: linkAttributes,
    })),
    events,
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount,
    droppedEventsCount,
    droppedLinksCount,
  };
}

const spanContextOf = (
  traceId: string,
  spanId: string,
  traceFlags: number,
  traceState: string | undefined,
  isRemote: boolean | undefined,
): SpanContext => ({
  traceId,
  spanId,
  traceFlags,
  traceState: traceState === undefined ? undefined : new TraceState(traceState),
  isRemote,
});
