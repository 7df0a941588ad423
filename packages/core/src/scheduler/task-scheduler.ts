import { performance } from 'node:perf_hooks';
import type { CorepoolError } from '../common/app-error';
import { CostModel, costKeyOf, type CostEstimate } from './cost-model';
import { admissionVerdict } from './admission';
import { patienceUnknown, shedForRoom } from './backstop';
import { DeadlineWatch } from './deadline-watch';
import { FairQueue, type WorkMeasure } from './fair-queue';
import { OverloadMode } from './overload-mode';
import { Probes } from './probes';
import { RecheckClock, findUnreachable } from './recheck';
import { refusal, type RefusalEstimate, type RefusalReason } from './refusal';
import type { BatchSink, SchedulerOptions, SchedulerState, Ticket } from './scheduler-types';
import { joinsBatch, ThreadSlots } from './thread-slots';
import { threadTimeUntil } from './thread-time';
import {
  abortError,
  lateToStart,
  neededToStart,
  startTask,
  type Abortable,
  type CancelFollower,
  type Waiting,
} from './waiting';

export { PROBE_AFTER_MS } from './probes';
export type {
  BatchOptions,
  BatchSink,
  SchedulerOptions,
  SchedulerState,
  Ticket,
} from './scheduler-types';

/**
 * The queue discipline in front of the pool's threads:
 *
 * - **admission by time**, refusing at once only what cannot succeed
 *   (`admission.ts`, ADR 0041). An idle thread takes a task its floor would
 *   refuse once per `PROBE_AFTER_MS`, so the model keeps measuring.
 *   `maxQueue` is a memory backstop only (`backstop`).
 * - **looking again** as runs complete, refusing then the waiting tasks that
 *   can no longer finish, not at their deadline (`recheck.ts`).
 * - **CoDel and adaptive LIFO, on evidence**: newest first and shedding for
 *   queue delay only while clients are seen giving up (`overload-mode.ts`).
 * - **rescue before the deadline**, so newest-first service does not starve
 *   a patient caller (`deadline-watch.ts`).
 * - **fair shares**: deficit round robin across client keys, weighted by
 *   estimated cost (`fair-queue.ts`); jobs are one more key, capped at
 *   `jobsMaxThreads` threads.
 */
export class TaskScheduler {
  private readonly queue = new FairQueue<Waiting>();
  private readonly costs: CostModel;
  private readonly overload: OverloadMode;
  private readonly threads: ThreadSlots;
  private readonly refused: Record<RefusalReason, number> = {
    deadline: 0,
    'too-long': 0,
    'queue-delay': 0,
    backstop: 0,
  };
  /** The task being admitted, while it may start at once: it has not waited, so it is not shed for lateness. */
  private admitting: Waiting | undefined;
  private readonly probes: Probes;
  private readonly rechecks: RecheckClock;
  private readonly watch: DeadlineWatch;
  private readonly now: () => number;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly follow: CancelFollower,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.costs = new CostModel(options.costPriorMs, this.now, options.slots);
    this.probes = new Probes(this.costs);
    this.overload = new OverloadMode(options, this.now);
    this.rechecks = new RecheckClock(this.now, () => this.recheck());
    this.threads = new ThreadSlots({
      slots: options.slots,
      jobsMaxThreads: options.jobsMaxThreads,
      batch: options.batch,
      now: this.now,
      refresh: (waiting) => this.refresh(waiting),
      ran: ({ ticket }, completed, runMs) => {
        const task = costKeyOf(ticket.task, ticket.costClass);
        if (completed) this.costs.record(task, runMs, ticket.size, ticket.key);
        else this.costs.recordAtLeast(task, runMs, ticket.size, ticket.key);
      },
      freed: () => {
        this.pump();
        this.rechecks.ran(this.now(), this.queued);
      },
    });
    this.watch = new DeadlineWatch({
      now: this.now,
      targetDelayMs: options.targetDelayMs,
      refresh: (waiting) => this.refresh(waiting),
      rescued: () => this.pump(),
      shed: (waiting, now) => {
        if (this.leave(waiting)) waiting.fail(this.refuseLate(waiting, now));
      },
    });
  }

  /** Tasks waiting for a thread. */
  get queued(): number {
    return this.queue.size;
  }

  /**
   * Calls `start` when the task's turn comes; resolves or rejects as its
   * promise does. Rejects at once with POOL_SATURATED when the task is not
   * admitted, later when it is shed while waiting, and with an AbortError,
   * never calling `start`, if `signal` aborts first. A `batchable` task may be
   * started into a batch (`SchedulerOptions.batch`), which `start` receives.
   */
  run<T>(
    ticket: Ticket,
    start: (batch?: BatchSink) => Promise<T>,
    signal: Abortable,
    batchable = false,
  ): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError());
    const now = this.now();
    const estimate = this.estimateOf(ticket);
    const refused = this.admit(ticket, estimate, now);
    if (refused !== undefined) return Promise.reject(refused);

    return new Promise<T>((resolve, reject) => {
      let stopFollowing: () => void = () => undefined;
      const waiting: Waiting = {
        key: ticket.key,
        cost: estimate.ms,
        floorMs: estimate.floorMs,
        estimate,
        version: this.costs.version,
        ticket,
        enqueuedAt: now,
        batchable,
        place: 'line',
        begin: (batch, settled) => {
          stopFollowing();
          const started = startTask(start, batch);
          // Registered first, so the slot is settled (and the next task started) before the caller hears.
          started.then(
            (result) => settled(true, this.options.threadMsOf?.(result)),
            () => settled(false),
          );
          started.then(resolve, reject);
        },
        fail: (error) => {
          stopFollowing();
          reject(error);
        },
      };
      waiting.handle = this.queue.push(waiting);
      this.admitting = waiting;
      this.pump();
      this.admitting = undefined;
      // A task that found a thread free has started: it needs no rescue timer and no
      // listener for a cancellation while it waits (two allocations fewer per task).
      if (waiting.place === 'gone') return;
      this.watch.arm(waiting, now);
      this.rechecks.arrived(now, ticket.deadlineAt - now, this.queued);
      stopFollowing = this.follow(signal, () => {
        if (!this.leave(waiting)) return;
        this.overload.gaveUp(this.now());
        reject(abortError());
      });
    });
  }

  state(): SchedulerState {
    const keys = this.queue.depths().sort((a, b) => b.waiting - a.waiting);
    return {
      mode: this.overload.order,
      queued: this.queued,
      backlogMs: this.backlogMs(),
      lastDelayMs: this.overload.lastDelayMs,
      targetDelayMs: this.options.targetDelayMs,
      intervalMs: this.options.intervalMs,
      refusals: { ...this.refused },
      keys,
      jobs: { running: this.threads.jobs, maxThreads: this.options.jobsMaxThreads },
      batches: { ...this.threads.batches },
    };
  }

  /** Undefined to admit; otherwise the refusal, counted. */
  private admit(ticket: Ticket, estimate: CostEstimate, now: number): CorepoolError | undefined {
    const { slots, maxQueue } = this.options;
    if (this.queued >= maxQueue && !this.makeRoomFor(ticket)) {
      return this.refuse('backstop', this.backlogMs() / slots);
    }
    const order = this.overload.order;
    const aheadFloorMs = this.queue.workAhead(ticket.key, estimate.floorMs, order, 'floor');
    const waitFloorMs = this.estimatedWait(aheadFloorMs, now, 'floor');
    const verdict = admissionVerdict({
      estimate,
      leftMs: ticket.deadlineAt - now,
      waitFloorMs,
      startsAtOnce: waitFloorMs === 0 && this.threads.free,
      shedsForDelay: this.overload.shedding && patienceUnknown(ticket),
      targetDelayMs: this.options.targetDelayMs,
      slots,
      queuedAheadMs: () => this.queue.workAhead(ticket.key, estimate.ms, order),
    });
    switch (verdict?.reason) {
      case undefined:
        return undefined;
      case 'deadline':
        return this.refuse('deadline', waitFloorMs, verdict.facts);
      case 'too-long':
        if (verdict.probe && this.probes.take(ticket, now)) return undefined;
        return this.refuse('too-long', this.probes.waitFor(ticket, now), verdict.facts);
      case 'queue-delay':
        return this.refuse('queue-delay', this.estimatedWait(verdict.aheadMs, now, 'cost'));
    }
  }

  /** The queue is full: makes room by shedding another task (`backstop.ts`); false if none may go. */
  private makeRoomFor(ticket: Ticket): boolean {
    const room = shedForRoom(this.queue, ticket, this.overload.shedding);
    if (room === undefined) return false;
    const { shed, reason } = room;
    shed.place = 'gone';
    clearTimeout(shed.timer);
    shed.fail(this.refuse(reason, this.backlogMs() / this.options.slots));
    return true;
  }

  /**
   * When a task with `aheadMs` of queued work before it would start: as the
   * running tasks end (by their estimates, or their floors), the threads take
   * up that work.
   */
  private estimatedWait(aheadMs: number, now: number, measure: WorkMeasure): number {
    return threadTimeUntil(this.threads.freeAt(now, measure), aheadMs);
  }

  /** Starts waiting tasks while threads are free, in fair turns, small ones in batches. */
  private pump(): void {
    while (this.threads.free && this.queued > 0) {
      const first = this.takeNext();
      if (first === undefined) break;
      this.threads.begin([first, ...this.batchAfter(first)]);
    }
    if (this.queued === 0) this.overload.drained();
  }

  /**
   * The next task that may still start in time, taken out of line (one that
   * can no longer is shed on the way); `fits` narrows it to tasks a batch takes.
   */
  private takeNext(fits?: (waiting: Waiting) => boolean): Waiting | undefined {
    for (;;) {
      const next = this.queue.next(this.overload.order, (key) => this.threads.eligible(key), fits);
      if (next === undefined) return undefined;
      const now = this.now();
      clearTimeout(next.timer);
      next.place = 'gone';
      this.refresh(next);
      if (next !== this.admitting && lateToStart(next, now)) {
        next.fail(this.refuseLate(next, now));
        continue;
      }
      const delayMs = now - next.enqueuedAt;
      this.overload.started(delayMs, now);
      this.options.onDelay?.(delayMs);
      return next;
    }
  }

  /**
   * The tasks that join `first` on its thread: the next ones the queue would
   * serve anyway, while they are small and the batch's estimate allows.
   * Jobs never join one: their thread cap counts threads, not batches.
   */
  private batchAfter(first: Waiting): Waiting[] {
    const { batch } = this.options;
    if (batch === undefined || !joinsBatch(first, batch.maxCostMs)) return [];
    const members: Waiting[] = [];
    let budgetMs = batch.maxCostMs - first.cost;
    while (members.length + 1 < batch.maxTasks) {
      const next = this.takeNext((waiting) => joinsBatch(waiting, budgetMs));
      if (next === undefined) break;
      members.push(next);
      budgetMs -= next.cost;
    }
    return members;
  }

  private refuseLate(waiting: Waiting, now: number): CorepoolError {
    this.overload.gaveUp(now);
    const ownMs = neededToStart(waiting.estimate);
    const leftMs = waiting.ticket.deadlineAt - now;
    return this.refuse('too-long', this.backlogMs() / this.options.slots, {
      aheadMs: 0,
      ownMs,
      leftMs,
    });
  }

  /** Estimates a waiting task anew if the cost model learnt since its last estimate. */
  private refresh(waiting: Waiting): void {
    if (waiting.version === this.costs.version) return;
    const estimate = this.estimateOf(waiting.ticket);
    waiting.version = this.costs.version;
    waiting.estimate = estimate;
    if (
      waiting.place === 'gone' ||
      waiting.handle?.reprice(estimate.ms, estimate.floorMs) !== true
    ) {
      waiting.cost = estimate.ms;
      waiting.floorMs = estimate.floorMs;
    }
  }

  /** The cost of the ticket's task and cost class at its size, as the ticket's client may rely on it. */
  private estimateOf(ticket: Ticket): CostEstimate {
    return this.costs.estimate(costKeyOf(ticket.task, ticket.costClass), ticket.size, ticket.key);
  }

  /**
   * Looks at every waiting task again, with what the model knows now, and
   * refuses those that can no longer finish (ADR 0041), in the order met.
   */
  private recheck(): void {
    const now = this.now();
    const lines = this.queue.linesInServeOrder(this.overload.order);
    for (const { entries } of lines) for (const waiting of entries) this.refresh(waiting);
    const { unreachable, shortestMs } = findUnreachable(
      lines,
      this.threads.freeAt(now, 'floor'),
      now,
    );
    for (const found of unreachable) {
      const { waiting } = found;
      if (!this.leave(waiting)) continue;
      if (found.late) {
        waiting.fail(this.refuseLate(waiting, now));
      } else {
        this.overload.gaveUp(now);
        waiting.fail(this.refuse('deadline', found.facts.aheadMs, found.facts));
      }
    }
    this.rechecks.looked(now, shortestMs, this.queued);
  }

  /** Takes a waiting task out early; false when it already left. */
  private leave(waiting: Waiting): boolean {
    switch (waiting.place) {
      case 'gone':
        return false;
      case 'line':
      case 'rescue':
        if (waiting.handle?.remove() !== true) return false;
        break;
    }
    waiting.place = 'gone';
    clearTimeout(waiting.timer);
    if (this.queued === 0) this.overload.drained();
    return true;
  }

  private backlogMs(): number {
    return this.queue.backlogMs;
  }

  private refuse(
    reason: RefusalReason,
    retryAfterMs: number,
    estimate?: RefusalEstimate,
  ): CorepoolError {
    this.refused[reason] += 1;
    return refusal(reason, retryAfterMs, this.options.maxRetryAfterSeconds, estimate);
  }
}
