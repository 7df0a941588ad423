import { performance } from 'node:perf_hooks';
import type { CorepoolError } from '../common/app-error';
import { JOBS_CLIENT_KEY as JOBS_KEY } from './client-keys';
import { CoDel } from './codel';
import { CostModel, costKeyOf, type CostEstimate } from './cost-model';
import { FairQueue, type ServeOrder, type WorkMeasure } from './fair-queue';
import { Impatience } from './impatience';
import { Probes } from './probes';
import { refusal, type RefusalEstimate, type RefusalReason } from './refusal';
import type { BatchSink, SchedulerOptions, SchedulerState, Ticket } from './scheduler-types';
import { ShareSums } from './share-sums';
import { threadTimeUntil } from './thread-time';
import {
  abortError,
  startTask,
  type Abortable,
  type CancelFollower,
  type Running,
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

/** Waiting tasks are checked again no sooner than this after the last look, and … */
const RECHECK_MIN_MS = 25;
/**
 * … no sooner than this per task waiting: a look walks every one, so a crowd of
 * 10,000 is looked at twice a second, not in back-to-back stretches of the loop (ADR 0052).
 */
const RECHECK_MS_PER_WAITING = 0.05;
/** … at the latest after this fraction of the shortest deadline waiting (bounded below and above). */
const RECHECK_FRACTION = 8;
const RECHECK_MAX_MS = 1000;
/**
 * CoDel's standing queue turns into shedding and newest-first service only
 * while clients are seen giving up on waiting tasks (`impatience.ts`), over
 * windows of this many intervals, and at least this long: clients' patience
 * is counted in seconds, whatever the interval.
 */
const IMPATIENCE_WINDOW_INTERVALS = 10;
const IMPATIENCE_WINDOW_MIN_MS = 5_000;

/**
 * The queue discipline in front of the pool's threads, in one unit:
 *
 * - **admission by time, refusing only what cannot succeed** (ADR 0041): a
 *   task is refused at once when what surely lies ahead of it (its fair share
 *   of the queue, and what the threads still have to do) plus what it surely
 *   costs itself does not fit before its deadline: `deadline` when the work
 *   ahead is what leaves it no time, `too-long` when its own cost alone is
 *   longer than the time left. "Surely" is the cost model's floor: a size
 *   never measured costs only what a smaller measured one did, so an uncertain
 *   estimate admits, and the deadline still stops an overrun. An idle thread
 *   takes a task its floor would refuse once per `PROBE_AFTER_MS`, so the
 *   model keeps measuring. `maxQueue` is a memory backstop only (`backstop`).
 * - **looking again**: as runs complete (and at the latest every eighth of the
 *   shortest deadline waiting), the waiting tasks are estimated anew and those
 *   that can no longer finish are refused then, not at their deadline.
 * - **CoDel and adaptive LIFO, on evidence**: while the queue delay stays
 *   above the target (`codel.ts`) and clients are seen giving up (a waiting
 *   task abandoned, or shed for its deadline, lately), each key's newest
 *   waiting task runs first, since its client is the most surely still
 *   there, and a task without a client deadline that would wait longer than
 *   the target plus its own run time is refused (`queue-delay`); FIFO
 *   otherwise: a patient crowd is served in line, not refused.
 * - **rescue before the deadline**: newest-first service must not starve a
 *   patient caller. A waiting task whose latest start (its deadline minus its
 *   run time) is its run time plus the target away moves ahead of its own
 *   key's line (not of other keys: fair shares hold); one that still cannot start in time is
 *   shed (`deadline`) rather than left to time out, so an admitted task ends
 *   in 504 only if it ran longer than estimated.
 * - **fair shares**: deficit round robin across client keys, weighted by
 *   estimated cost (`fair-queue.ts`); jobs are one more key, capped at
 *   `jobsMaxThreads` threads.
 */
export class TaskScheduler {
  private readonly queue = new FairQueue<Waiting>();
  private readonly costs: CostModel;
  private readonly codel: CoDel;
  private readonly running = new Set<Running>();
  private readonly refused: Record<RefusalReason, number> = {
    deadline: 0,
    'too-long': 0,
    'queue-delay': 0,
    backstop: 0,
  };
  /** The task being admitted, while it may start at once: it has not waited, so it is not shed for lateness. */
  private admitting: Waiting | undefined;
  private readonly probes: Probes;
  private recheckTimer: NodeJS.Timeout | undefined;
  private recheckDueAt = Infinity;
  private lastRecheckAt = -Infinity;
  private jobsRunning = 0;
  private readonly impatience: Impatience;
  private readonly batches = { sent: 0, tasks: 0 };
  private readonly now: () => number;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly follow: CancelFollower,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.costs = new CostModel(options.costPriorMs, this.now, options.slots);
    this.probes = new Probes(this.costs);
    this.codel = new CoDel({ targetMs: options.targetDelayMs, intervalMs: options.intervalMs });
    this.impatience = new Impatience(
      Math.max(IMPATIENCE_WINDOW_MIN_MS, options.intervalMs * IMPATIENCE_WINDOW_INTERVALS),
    );
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
      this.armRescue(waiting, now);
      this.recheckWithin(now, (ticket.deadlineAt - now) / RECHECK_FRACTION);
      stopFollowing = this.follow(signal, () => {
        if (!this.leave(waiting)) return;
        this.impatience.left(this.now(), true);
        reject(abortError());
      });
    });
  }

  state(): SchedulerState {
    const keys = this.queue.depths().sort((a, b) => b.waiting - a.waiting);
    return {
      mode: this.order(),
      queued: this.queued,
      backlogMs: this.backlogMs(),
      lastDelayMs: this.codel.lastDelayMs,
      targetDelayMs: this.options.targetDelayMs,
      intervalMs: this.options.intervalMs,
      refusals: { ...this.refused },
      keys,
      jobs: { running: this.jobsRunning, maxThreads: this.options.jobsMaxThreads },
      batches: { ...this.batches },
    };
  }

  /** Undefined to admit; otherwise the refusal, counted. */
  private admit(ticket: Ticket, estimate: CostEstimate, now: number): CorepoolError | undefined {
    const { slots, maxQueue } = this.options;
    if (this.queued >= maxQueue && !this.makeRoomFor(ticket)) {
      return this.refuse('backstop', this.backlogMs() / slots);
    }
    const order = this.order();
    const aheadFloorMs = this.queue.workAhead(ticket.key, estimate.floorMs, order, 'floor');
    const waitFloorMs = this.estimatedWait(aheadFloorMs, now, 'floor');
    const leftMs = ticket.deadlineAt - now;
    if (waitFloorMs + estimate.floorMs > leftMs) {
      const facts = { aheadMs: waitFloorMs, ownMs: estimate.floorMs, leftMs };
      const startsAtOnce = waitFloorMs === 0 && this.running.size < slots;
      if (startsAtOnce) {
        // Nothing ahead: only its own runs can say it cannot finish, and any
        // deadline over the fastest of them can still be met.
        if (estimate.fastestMs <= leftMs || this.probes.take(ticket, now)) return undefined;
        return this.refuse('too-long', this.probes.waitFor(ticket, now), {
          ...facts,
          ownMs: estimate.fastestMs,
        });
      }
      if (estimate.floorMs <= leftMs) return this.refuse('deadline', waitFloorMs, facts);
      return this.refuse('too-long', this.probes.waitFor(ticket, now), facts);
    }
    // Only the queued work counts here: waiting for a running task to end is
    // no queue's fault, and no shedding could shorten it.
    const aheadMs = this.queue.workAhead(ticket.key, estimate.ms, order);
    const queueDelayMs = aheadMs / slots;
    if (
      this.shedding() &&
      this.patienceUnknown(ticket) &&
      queueDelayMs > this.options.targetDelayMs + estimate.ms
    ) {
      return this.refuse('queue-delay', this.estimatedWait(aheadMs, now, 'cost'));
    }
    return undefined;
  }

  /**
   * The queue is full. A key with fewer tasks waiting than the fattest one
   * gets room by shedding the fattest key's oldest task, so one client's
   * flood cannot fill the backstop and lock the others out (`backstop`).
   * While overloaded, any newcomer gets room by shedding the oldest task of
   * the fattest key whose client gave no deadline (`queue-delay`): served
   * newest first, that task is the least likely to run while its client
   * still waits, and a full queue of such tasks would refuse every fresh one.
   * A newcomer whose client gave its deadline gets that room whenever the
   * queue is full: its caller said it waits, the shed one's never did (the
   * bench's patient clients failed 16 of 25 beside impatient ones without it).
   */
  private makeRoomFor(ticket: Ticket): boolean {
    let shed = this.queue.shedFattest(this.queue.waitingOf(ticket.key) + 1);
    let reason: RefusalReason = 'backstop';
    if (shed === undefined && (this.shedding() || !this.patienceUnknown(ticket))) {
      shed = this.queue.shedFattest(0, (waiting) => this.patienceUnknown(waiting.ticket));
      reason = 'queue-delay';
    }
    if (shed === undefined) return false;
    shed.place = 'gone';
    clearTimeout(shed.timer);
    shed.fail(this.refuse(reason, this.backlogMs() / this.options.slots));
    return true;
  }

  /** No deadline header, and not a job: nobody said how long the caller waits. */
  private patienceUnknown(ticket: Ticket): boolean {
    return !ticket.clientDeadline && ticket.key !== JOBS_KEY;
  }

  /**
   * When a task with `aheadMs` of queued work before it would start: as the
   * running tasks end (by their estimates, or their floors), the threads take
   * up that work.
   */
  private estimatedWait(aheadMs: number, now: number, measure: WorkMeasure): number {
    return threadTimeUntil(this.freeAt(now, measure), aheadMs);
  }

  /** When each thread frees up, in ms from now, by the running tasks' estimates or floors. */
  private freeAt(now: number, measure: WorkMeasure): number[] {
    const freeAt: number[] = [];
    for (const thread of this.running) {
      let ms = 0;
      for (const member of thread.members) {
        // What the model learnt since the task started counts too: a cold burst's
        // first runs tell what the ones still running will take.
        this.refresh(member);
        ms += measure === 'cost' ? member.cost : member.floorMs;
      }
      freeAt.push(Math.max(0, ms - (now - thread.startedAt)));
    }
    while (freeAt.length < this.options.slots) freeAt.push(0);
    return freeAt;
  }

  /** Starts waiting tasks while threads are free, in fair turns, small ones in batches. */
  private pump(): void {
    while (this.running.size < this.options.slots && this.queued > 0) {
      const first = this.takeNext();
      if (first === undefined) break;
      this.begin([first, ...this.batchAfter(first)]);
    }
    if (this.queued === 0) this.codel.drained();
  }

  /**
   * The next task that may still start in time, taken out of line (one that
   * can no longer is shed on the way); `fits` narrows it to tasks a batch takes.
   */
  private takeNext(fits?: (waiting: Waiting) => boolean): Waiting | undefined {
    for (;;) {
      const next = this.queue.next(this.order(), (key) => this.eligible(key), fits);
      if (next === undefined) return undefined;
      const now = this.now();
      clearTimeout(next.timer);
      next.place = 'gone';
      this.refresh(next);
      if (next !== this.admitting && this.lateToStart(next, now)) {
        next.fail(this.refuseLate(next, now));
        continue;
      }
      const delayMs = now - next.enqueuedAt;
      this.impatience.left(now, false);
      this.codel.dequeued(delayMs, now);
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
    if (batch === undefined || !this.batchesWith(first, batch.maxCostMs)) return [];
    const members: Waiting[] = [];
    let budgetMs = batch.maxCostMs - first.cost;
    while (members.length + 1 < batch.maxTasks) {
      const next = this.takeNext((waiting) => this.batchesWith(waiting, budgetMs));
      if (next === undefined) break;
      members.push(next);
      budgetMs -= next.cost;
    }
    return members;
  }

  private batchesWith(waiting: Waiting, budgetMs: number): boolean {
    return waiting.batchable && waiting.key !== JOBS_KEY && waiting.cost <= budgetMs;
  }

  /** Jobs may not take more than their threads; every other key may take any free one. */
  private eligible(key: string): boolean {
    return key !== JOBS_KEY || this.jobsRunning < this.options.jobsMaxThreads;
  }

  /**
   * Starts a task, or a batch of them, on one thread slot; the slot is free
   * again once every one of them has settled. A batch's thread runs its tasks
   * one after another and answers them together: each is recorded at its
   * share of the batch's time.
   */
  private begin(members: readonly Waiting[]): void {
    const thread: Running = { members, startedAt: this.now() };
    this.running.add(thread);
    const [first] = members as [Waiting];
    const jobs = first.key === JOBS_KEY;
    if (jobs) this.jobsRunning += 1;
    let unsettled = members.length;
    const batch = members.length > 1 ? this.options.batch?.open() : undefined;
    if (batch !== undefined) {
      this.batches.sent += 1;
      this.batches.tasks += members.length;
    }
    for (const member of members) {
      member.begin(batch, (completed, threadMs) => {
        const elapsed = (this.now() - thread.startedAt) / members.length;
        const { ticket } = member;
        const task = costKeyOf(ticket.task, ticket.costClass);
        if (completed) this.costs.record(task, threadMs ?? elapsed, ticket.size, ticket.key);
        else this.costs.recordAtLeast(task, elapsed, ticket.size, ticket.key);
        unsettled -= 1;
        if (unsettled > 0) return;
        this.running.delete(thread);
        if (jobs) this.jobsRunning -= 1;
        this.pump();
        this.recheckWithin(this.now(), RECHECK_MIN_MS);
      });
    }
    batch?.close();
  }

  /**
   * Moves the task ahead of its key's line once half of its slack (the time
   * from its arrival to its latest start) is spent, or its own run time plus
   * the target before its latest start if that comes first; sheds it at its
   * latest start if it is still waiting. One run time is enough only while
   * the threads keep to their estimates: under load they ran up to 6 times
   * longer, and the bench's patient clients lost 4 of 12 tasks rescued that
   * late (docs/adr/0020-backstop-holds-the-waiting-clients.md). Half the slack still
   * leaves newest-first service the first half to serve the impatient.
   */
  private armRescue(waiting: Waiting, now: number): void {
    const latestStart = waiting.ticket.deadlineAt - waiting.cost;
    const rescueAt = Math.min(
      latestStart - waiting.cost - this.options.targetDelayMs,
      now + (latestStart - now) / 2,
    );
    waiting.timer = setTimeout(
      () => {
        if (waiting.place !== 'line' || waiting.handle?.rescue() !== true) return;
        waiting.place = 'rescue';
        this.armShedLate(waiting);
        this.pump();
      },
      // Whole milliseconds: timers of one duration share Node's list for it (worker-pool.service.ts).
      Math.max(0, Math.ceil(rescueAt - now)),
    );
  }

  /**
   * Sheds a rescued task at its latest start, if it is still waiting then. A
   * task whose cost is not known at its size has no latest start before its
   * deadline: the pool's own deadline ends it.
   */
  private armShedLate(waiting: Waiting): void {
    const needMs = neededToStart(waiting.estimate);
    if (needMs <= 0) return;
    waiting.timer = setTimeout(
      () => this.shedLate(waiting),
      Math.max(0, Math.ceil(waiting.ticket.deadlineAt - needMs - this.now())),
    );
  }

  private shedLate(waiting: Waiting): void {
    const now = this.now();
    this.refresh(waiting);
    if (!this.lateToStart(waiting, now)) {
      this.armShedLate(waiting);
      return;
    }
    if (!this.leave(waiting)) return;
    waiting.fail(this.refuseLate(waiting, now));
  }

  /**
   * A task that waited starts only while the time it needs (`neededToStart`)
   * still fits before its deadline: started later, it would most likely end
   * in a 504 after holding a thread for the rest of its deadline.
   */
  private lateToStart(waiting: Waiting, now: number): boolean {
    const needMs = neededToStart(waiting.estimate);
    return needMs > 0 && now + needMs >= waiting.ticket.deadlineAt;
  }

  private refuseLate(waiting: Waiting, now: number): CorepoolError {
    this.impatience.left(now, true);
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

  /** Makes sure the waiting tasks are checked again within `withinMs` (spaced as above). */
  private recheckWithin(now: number, withinMs: number): void {
    if (this.queued === 0) return;
    const dueAt = Math.max(
      this.lastRecheckAt + Math.max(RECHECK_MIN_MS, this.queued * RECHECK_MS_PER_WAITING),
      now + Math.min(RECHECK_MAX_MS, Math.max(0, withinMs)),
    );
    if (dueAt >= this.recheckDueAt) return;
    clearTimeout(this.recheckTimer);
    this.recheckDueAt = dueAt;
    // Unref'd: a look at the queue is no reason to keep a process alive.
    this.recheckTimer = setTimeout(() => this.recheck(), Math.max(0, Math.ceil(dueAt - now)));
    this.recheckTimer.unref();
  }

  /**
   * Looks at every waiting task again, with what the model knows now: one
   * whose latest start has passed, or for which the work surely ahead of it
   * plus its own floor no longer fits before its deadline, is refused now,
   * rather than left to wait for its deadline (ADR 0041). Each key's line is
   * walked in the order it would be served; the other keys' work ahead of a
   * task is what round robin serves of them meanwhile.
   */
  private recheck(): void {
    this.recheckTimer = undefined;
    this.recheckDueAt = Infinity;
    const now = this.now();
    this.lastRecheckAt = now;
    const lines = this.queue.linesInServeOrder(this.order());
    for (const { entries } of lines) for (const waiting of entries) this.refresh(waiting);
    const totals = new ShareSums(lines.map(({ entries }) => sumFloors(entries)));
    const freeAt = this.freeAt(now, 'floor');
    let shortestMs = Infinity;
    lines.forEach(({ entries }, line) => {
      let ownAheadMs = 0;
      for (const waiting of entries) {
        const reach = ownAheadMs + waiting.floorMs;
        const aheadMs = ownAheadMs + totals.sumOfMinExcept(line, reach);
        const waitMs = threadTimeUntil(freeAt, aheadMs);
        const leftMs = waiting.ticket.deadlineAt - now;
        if (this.lateToStart(waiting, now)) {
          if (this.leave(waiting)) waiting.fail(this.refuseLate(waiting, now));
          continue;
        }
        if (waitMs + waiting.floorMs > leftMs) {
          const facts = { aheadMs: waitMs, ownMs: waiting.floorMs, leftMs };
          if (this.leave(waiting)) {
            this.impatience.left(now, true);
            waiting.fail(this.refuse('deadline', waitMs, facts));
          }
          continue;
        }
        ownAheadMs = reach;
        shortestMs = Math.min(shortestMs, waiting.ticket.deadlineAt - waiting.enqueuedAt);
      }
    });
    this.recheckWithin(now, shortestMs / RECHECK_FRACTION);
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
    if (this.queued === 0) this.codel.drained();
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

  private order(): ServeOrder {
    return this.shedding() ? 'lifo' : 'fifo';
  }

  /**
   * Overload mode: a standing queue (CoDel) while clients are seen giving up.
   * A standing queue alone is a crowd served in line; shedding it would only
   * turn answers that arrive in time into refusals asked again at once.
   */
  private shedding(): boolean {
    return this.codel.overloaded && this.impatience.seen(this.now());
  }
}

/**
 * The time a task that waited must still have to start: nine runs in ten of
 * its measured size end within it; where its size was not measured enough,
 * the least its runs so far took, and nothing where none was measured, so
 * that a guess never sheds it.
 */
function neededToStart(estimate: CostEstimate): number {
  return estimate.sure ? estimate.highMs : estimate.seenMs;
}

function sumFloors(entries: readonly Waiting[]): number {
  let sum = 0;
  for (const waiting of entries) sum += waiting.floorMs;
  return sum;
}
