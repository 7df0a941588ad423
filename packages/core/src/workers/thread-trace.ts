import type { SpanAttributes, TaskSpan } from '../tasks/task-context';

/**
 * Spans made on a worker thread, without the OpenTelemetry SDK: the thread
 * bundle stays as small and quick to start as it was (ADR 0048). A traced
 * task's request carries its parent's ids; the thread records its run span
 * (and any child spans and events the task adds through its context) as plain
 * data, and the records go back with the task's answer, where the main
 * thread's SDK exports them as they are: ids, times and all.
 */

/** A span's place in its trace, as the W3C `traceparent` holds it (lower-case hex). */
export interface TraceParentIds {
  readonly traceId: string;
  readonly spanId: string;
}

export type { SpanAttributes, TaskSpan } from '../tasks/task-context';

export interface SpanEventRecord {
  readonly name: string;
  /** Epoch ms, on the clock every thread shares. */
  readonly timeMs: number;
  readonly attributes?: SpanAttributes;
}

/** One span as the thread recorded it. */
export interface ThreadSpanRecord {
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly startMs: number;
  endMs: number;
  readonly attributes: SpanAttributes;
  readonly events: SpanEventRecord[];
  status: 'unset' | 'ok' | 'error';
  statusMessage?: string;
}

/** corepool's own span attributes share this prefix; OpenTelemetry's names are used where one exists. */
export const ATTRIBUTE_PREFIX = 'corepool.';

/** Most child spans and events one task may record: a task in a loop must not grow its answer without bound. */
const MAX_RECORDS_PER_TASK = 128;

/** What `startSpan` gives a task whose request is not traced: every call does nothing. */
export const UNTRACED_SPAN: TaskSpan = {
  setAttribute: () => undefined,
  addEvent: () => undefined,
  end: () => undefined,
};

/** 8 random bytes as 16 hex digits: a span id, as the SDK's own generator makes them. */
export function newSpanId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  let id = '';
  for (const byte of bytes) id += byte.toString(16).padStart(2, '0');
  return id;
}

/**
 * The spans of one traced task on its thread: the run span, a child of the
 * request's scheduler span, and what the task adds under it.
 */
export class ThreadTrace {
  readonly run: ThreadSpanRecord;
  private readonly children: ThreadSpanRecord[] = [];
  private recorded = 0;

  constructor(
    parent: TraceParentIds,
    name: string,
    startMs: number,
    attributes: SpanAttributes,
    private readonly now: () => number,
  ) {
    this.run = {
      spanId: newSpanId(),
      parentSpanId: parent.spanId,
      name,
      startMs,
      endMs: startMs,
      attributes,
      events: [],
      status: 'unset',
    };
  }

  addEvent(name: string, attributes?: SpanAttributes): void {
    if (this.recorded++ < MAX_RECORDS_PER_TASK) {
      this.run.events.push({ name, timeMs: this.now(), attributes });
    }
  }

  startSpan(name: string, attributes: SpanAttributes = {}): TaskSpan {
    if (this.recorded++ >= MAX_RECORDS_PER_TASK) return UNTRACED_SPAN;
    const startMs = this.now();
    const span: ThreadSpanRecord = {
      spanId: newSpanId(),
      parentSpanId: this.run.spanId,
      name,
      startMs,
      endMs: startMs,
      attributes: { ...attributes },
      events: [],
      status: 'unset',
    };
    this.children.push(span);
    let ended = false;
    return {
      setAttribute: (key, value) => {
        span.attributes[key] = value;
      },
      addEvent: (eventName, eventAttributes) => {
        span.events.push({ name: eventName, timeMs: this.now(), attributes: eventAttributes });
      },
      end: (error?: unknown) => {
        if (ended) return;
        ended = true;
        span.endMs = this.now();
        if (error !== undefined) markError(span, error);
      },
    };
  }

  /** Ends the run span (and any child the task left open) and returns every record. */
  finish(
    attributes: SpanAttributes,
    error?: { type: string; message: string },
  ): ThreadSpanRecord[] {
    const endMs = this.now();
    Object.assign(this.run.attributes, attributes);
    this.run.endMs = endMs;
    if (error !== undefined) {
      this.run.status = 'error';
      this.run.statusMessage = error.message;
      this.run.attributes['error.type'] = error.type;
    }
    for (const child of this.children) if (child.endMs === child.startMs) child.endMs = endMs;
    return [this.run, ...this.children];
  }
}

function markError(span: ThreadSpanRecord, error: unknown): void {
  span.status = 'error';
  span.statusMessage = error instanceof Error ? error.message : String(error);
  span.attributes['error.type'] = error instanceof Error ? error.name : 'Error';
}
