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
  const stream = new PassThrough();
  let after = lastEventId;
  let lastStatus: JobStatus | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // Tell the client to wait this long before reconnecting.
  stream.write(`retry: ${options.pollIntervalMs * 5}\n\n`);
  const heartbeat = setInterval(() => stream.write(': heartbeat\n\n'), options.heartbeatMs);
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    clearInterval(heartbeat);
    stream.end();
  };
  stream.on('close', close);

  const emit = ({ job, events }: JobEvents) => {
    for (const event of events) {
      stream.write(frame(event));
      after = event.id;
      if (event.type === 'status') lastStatus = event.status;
    }
    if (!isFinished(job.status)) return false;
    // A final status the backend did not log (a job failed by BullMQ itself) is still told.
    // (A resumed stream that saw nothing new had seen the end before it reconnected.)
    if (lastStatus !== job.status && (lastStatus !== undefined || lastEventId === 0)) {
      after += 1;
      stream.write(
        frame({
          id: after,
          type: 'status',
          status: job.status,
          at: job.finishedAt ?? job.createdAt,
        }),
      );
    }
    return true;
  };
  const poll = () => {
    if (closed) return;
    if (options.stopping()) return close();
    queue.events(id, caller, after).then(
      (found) => {
        if (closed) return;
        if (found === undefined || emit(found)) return close();
        timer = setTimeout(poll, options.pollIntervalMs);
      },
      () => close(),
    );
  };
  if (emit(first)) close();
  else timer = setTimeout(poll, options.pollIntervalMs);
  return stream;
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
