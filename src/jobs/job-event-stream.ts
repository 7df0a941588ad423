import { PassThrough } from 'node:stream';
import type { JobCaller, JobEvents, JobQueue } from './job-queue';
import { isFinished, type JobEvent, type JobStatus } from './job.types';

export interface JobEventStreamOptions {
  /** How often the queue is read for new events. */
  readonly pollIntervalMs: number;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  readonly heartbeatMs: number;
  /**
   * True once the process drains: the stream ends (the client reconnects,
   * with `Last-Event-ID`, to a process that serves), so that an open stream
   * never holds the drain until its budget runs out.
   */
  readonly stopping: () => boolean;
}

/**
 * A job's events as Server-Sent Events: what the first read found, then
 * whatever the queue records, read every `pollIntervalMs` (both backends keep
 * the events in the store, so any process serves any stream and a resumed
 * stream — `Last-Event-ID` — starts after the last event it saw). The stream
 * ends after the job's final status. Closing it stops the reads only: the
 * job goes on. A read that fails ends the stream; the client reconnects.
 */
export function jobEventStream(
  queue: JobQueue,
  id: string,
  caller: JobCaller,
  first: JobEvents,
  lastEventId: number,
  options: JobEventStreamOptions,
): PassThrough {
  return new EventStream(queue, id, caller, lastEventId, options).start(first);
}

/** One open stream: the last event it sent, the last status among them, and its timers. */
class EventStream {
  private readonly stream = new PassThrough();
  private after: number;
  private lastStatus: JobStatus | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly queue: JobQueue,
    private readonly id: string,
    private readonly caller: JobCaller,
    private readonly lastEventId: number,
    private readonly options: JobEventStreamOptions,
  ) {
    this.after = lastEventId;
  }

  start(first: JobEvents): PassThrough {
    // Tell the client to wait this long before reconnecting.
    this.stream.write(`retry: ${this.options.pollIntervalMs * 5}\n\n`);
    this.heartbeat = setInterval(
      () => this.stream.write(': heartbeat\n\n'),
      this.options.heartbeatMs,
    );
    this.stream.on('close', () => this.close());
    if (this.emit(first)) this.close();
    else this.timer = setTimeout(() => this.poll(), this.options.pollIntervalMs);
    return this.stream;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    this.stream.end();
  }

  /** Writes the events found; true once the job's final status is told. */
  private emit({ job, events }: JobEvents): boolean {
    for (const event of events) {
      this.stream.write(frame(event));
      this.after = event.id;
      if (event.type === 'status') this.lastStatus = event.status;
    }
    if (!isFinished(job.status)) return false;
    // A final status the backend did not log (a job failed by BullMQ itself) is still told.
    // (A resumed stream that saw nothing new had seen the end before it reconnected.)
    if (
      this.lastStatus !== job.status &&
      (this.lastStatus !== undefined || this.lastEventId === 0)
    ) {
      this.after += 1;
      this.stream.write(
        frame({
          id: this.after,
          type: 'status',
          status: job.status,
          at: job.finishedAt ?? job.createdAt,
        }),
      );
    }
    return true;
  }

  private poll(): void {
    if (this.closed) return;
    if (this.options.stopping()) return this.close();
    this.queue.events(this.id, this.caller, this.after).then(
      (found) => {
        if (this.closed) return;
        if (found === undefined || this.emit(found)) return this.close();
        this.timer = setTimeout(() => this.poll(), this.options.pollIntervalMs);
      },
      () => this.close(),
    );
  }
}

/** One SSE frame: the event's id, its type as the event name, the rest as JSON data. */
function frame(event: JobEvent): string {
  const { id, type, ...data } = event;
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `Last-Event-ID` as a number; anything else starts from the beginning. */
export function lastEventIdOf(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : 0;
}
