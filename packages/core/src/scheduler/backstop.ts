import { JOBS_CLIENT_KEY as JOBS_KEY } from './client-keys';
import type { FairQueue } from './fair-queue';
import type { Ticket } from './scheduler-types';
import type { Waiting } from './waiting';

/** No deadline header, and not a job: nobody said how long the caller waits. */
export function patienceUnknown(ticket: Ticket): boolean {
  return !ticket.clientDeadline && ticket.key !== JOBS_KEY;
}

/**
 * The queue is full (`maxQueue`, a memory backstop): the task to take out for
 * a newcomer with `ticket`, and the reason it is refused, or undefined when
 * the newcomer is the one refused. A key with fewer tasks waiting than the
 * fattest one gets room by shedding the fattest key's oldest task, so one
 * client's flood cannot fill the backstop and lock the others out
 * (`backstop`). While `overloaded`, any newcomer gets room by shedding the
 * oldest task of the fattest key whose client gave no deadline
 * (`queue-delay`): served newest first, that task is the least likely to run
 * while its client still waits, and a full queue of such tasks would refuse
 * every fresh one. A newcomer whose client gave its deadline gets that room
 * whenever the queue is full: its caller said it waits, the shed one's never
 * did (the bench's patient clients failed 16 of 25 beside impatient ones
 * without it). The task is taken out of the queue.
 */
export function shedForRoom(
  queue: FairQueue<Waiting>,
  ticket: Ticket,
  overloaded: boolean,
): { readonly shed: Waiting; readonly reason: 'backstop' | 'queue-delay' } | undefined {
  const fattest = queue.shedFattest(queue.waitingOf(ticket.key) + 1);
  if (fattest !== undefined) return { shed: fattest, reason: 'backstop' };
  if (!overloaded && patienceUnknown(ticket)) return undefined;
  const undated = queue.shedFattest(0, (waiting) => patienceUnknown(waiting.ticket));
  return undated === undefined ? undefined : { shed: undated, reason: 'queue-delay' };
}
