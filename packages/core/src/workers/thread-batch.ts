import type { Piscina } from 'piscina';
import type { BatchSink } from '../scheduler/task-scheduler';
import { Cancellation, onCancel } from './cancellation';
import type { TaskRequest, TaskResponse } from './task-message';
import type { TaskStop } from './task-stop';

/** The thread entry's export that runs a batch (`thread-entry.ts`). */
export const BATCH_TASK_NAME = 'batch';

interface Member {
  readonly request: TaskRequest;
  readonly stop: TaskStop;
  readonly resolve: (response: TaskResponse) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Small tasks that go to one thread in one Piscina message, and come back in
 * one answer: Piscina's dispatch (a `postMessage`, a wake-up, an answer) is
 * most of a tiny task's cost on the event loop, and a batch pays it once
 * (ADR 0023). The thread runs the tasks one after another; each still has its
 * own cancel flag, so a cancelled one stops alone.
 *
 * Only a task whose own stop terminates the thread (it ignored its
 * cancellation past the grace, or went over its memory) loses its thread
 * with the batch: the other tasks of a batch that did not answer are run
 * again, each alone, so one task's failure is never another's. Tasks are
 * pure functions of their input, so running one again is safe.
 */
export class ThreadBatch implements BatchSink {
  private readonly members: Member[] = [];

  constructor(
    /** The pool's Piscina: a batch is an array of requests in, an array of responses out. */
    private readonly pool: Piscina,
    /** Runs one task alone, as a task that was never batched runs. */
    private readonly runAlone: (request: TaskRequest, stop: TaskStop) => Promise<TaskResponse>,
    /** A batch's thread died (crash, heap) with no task's stop to account for it. */
    private readonly onThreadLost: (error: unknown) => void,
  ) {}

  add(request: TaskRequest, stop: TaskStop): Promise<TaskResponse> {
    return new Promise((resolve, reject) => this.members.push({ request, stop, resolve, reject }));
  }

  /** Sends the batch; called once, after every task was added. */
  close(): void {
    const { members } = this;
    // Any one task's termination terminates the batch's thread, as it would its own.
    const termination = new Cancellation();
    const stopFollowing = members.map(({ stop }) =>
      onCancel(stop.termination, () => termination.abort('terminated')),
    );
    for (const { stop } of members) stop.markPosted();
    const requests = members.map(({ request, stop }) => ({ ...request, cancelFlag: stop.flag }));
    this.pool.run(requests, { name: BATCH_TASK_NAME, signal: termination }).then(
      (responses: TaskResponse[]) => {
        for (const unfollow of stopFollowing) unfollow();
        members.forEach((member, index) => member.resolve(responses[index] as TaskResponse));
      },
      (error: unknown) => {
        for (const unfollow of stopFollowing) unfollow();
        if (!termination.aborted) this.onThreadLost(error);
        for (const member of members) {
          if (member.stop.termination.aborted) member.reject(error);
          else this.runAlone(member.request, member.stop).then(member.resolve, member.reject);
        }
      },
    );
  }
}
