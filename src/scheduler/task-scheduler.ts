import { performance } from 'node:perf_hooks';
import type { AppError } from '../common/app-error';
import { JOBS_CLIENT_KEY as JOBS_KEY } from '../auth/client-key';
import { CoDel } from './codel';
import { CostModel } from './cost-model';
import { FairQueue, type KeyDepth, type QueuedHandle, type ServeOrder } from './fair-queue';
import { refusal, type RefusalReason } from './refusal';
import { threadTimeUntil } from './thread-time';

/** What the scheduler is told about a task when it asks to run. */
export interface Ticket {
  /** The task's name: its cost is estimated per task. */
  readonly task: string;
  /** How much work this input is, in the task's own unit (`TaskDefinition.size`); 1 if undeclared. */
  readonly size: number;
  /** The fair-share key: a client's, the shared one, or the jobs'. */
  readonly key: string;
  /** When the task must have finished, on the scheduler's clock (ms). */
  readonly deadlineAt: number;
  /**
   * The client said how long it waits (a deadline header). Without it the
   * client's patience is unknown, so under overload such a task is refused
   * if it would wait longer than the target (`queue-delay`).
   */
  readonly clientDeadline: boolean;
}

export interface SchedulerOptions {
  /** Tasks that may run at once (the pool's threads). */
  readonly slots: number;
  /** Tasks that may wait, all keys together: a memory backstop only. */
  readonly maxQueue: number;
  /** CoDel's target queue delay and interval (ms). */
  readonly targetDelayMs: number;
  readonly intervalMs: number;
  /** Estimated run time of a task never measured yet (ms). */
  readonly costPriorMs: number;
  /** Threads the jobs key may hold at once. */
  readonly jobsMaxThreads: number;
  /** The longest `Retry-After` a refusal announces. */
  readonly maxRetryAfterSeconds: number;
  /** Called with each task's queue delay when it leaves the queue for a thread. */
  readonly onDelay?: (delayMs: number) => void;
  /** The clock (ms); `performance.now` unless a test drives it. */
  readonly now?: () => number;
  /** Small tasks a free thread takes together, when several wait; absent: one task per thread. */
  readonly batch?: BatchOptions;
}

/**
 * Batching: when a thread frees up and several small tasks wait, it takes up
 * to `maxTasks` of them in one message (one `postMessage`, one wake-up, one
 * answer), in the order the queue serves them. A batch holds one slot, as
 * one task does: a thread runs its tasks one after another.
 */
export interface BatchOptions {
  /** Most tasks in one batch. */
  readonly maxTasks: number;
  /**
   * Estimated thread time of a whole batch (ms): only tasks this small are
   * batched, and a batch's first answer waits about this long at most.
   */
  readonly maxCostMs: number;
  /** A new batch: its tasks' `start` add them to it, then `close` sends it. */
  readonly open: () => BatchSink;
}

/** Where the tasks of one batch gather before they go to a thread together. */
export interface BatchSink {
  close(): void;
}

/** The controller's state, for health and metrics. */
export interface SchedulerState {
  /** `lifo` while overloaded (newest first), else `fifo`. */
  readonly mode: ServeOrder;
  readonly queued: number;
  /** Estimated thread time of everything queued (ms). */
  readonly backlogMs: number;
  /** Queue delay of the last task that reached a thread (ms). */
  readonly lastDelayMs: number;
  readonly targetDelayMs: number;
  readonly intervalMs: number;
  /** Refusals and sheddings since start, by reason. */
  readonly refusals: Readonly<Record<RefusalReason, number>>;
  /** Keys with tasks waiting, deepest first. */
  readonly keys: readonly KeyDepth[];
  readonly jobs: { readonly running: number; readonly maxThreads: number };
  /** Batches sent since start, and the tasks they carried (`SchedulerOptions.batch`). */
  readonly batches: { readonly sent: number; readonly tasks: number };
}

/** One task waiting: in its key's line, rescued to the front of it, or gone (started, cancelled, shed). */
interface Waiting {
  readonly key: string;
  readonly cost: number;
  readonly ticket: Ticket;
  readonly enqueuedAt: number;
  /** May share a thread's message with other tasks (`SchedulerOptions.batch`). */
  readonly batchable: boolean;
  /** Hands the task to its thread, alone or into `batch`; settles the caller's promise. */
  readonly begin: (batch: BatchSink | undefined, settled: (completed: boolean) => void) => void;
  readonly fail: (error: AppError) => void;
  place: 'line' | 'rescue' | 'gone';
  handle?: QueuedHandle;
  /** Moves the task ahead in its key, then sheds it when it can no longer start in time. */
  timer?: NodeJS.Timeout;
}

/** A task on a thread, for the estimate of when threads free up. */
interface Running {
  readonly cost: number;
  readonly startedAt: number;
}

/** Calls a task's `start`; a `start` that throws is a rejection. */
function startTask<T>(
  start: (batch?: BatchSink) => Promise<T>,
  batch: BatchSink | undefined,
): Promise<T> {
  try {
    return start(batch);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** How a task cancelled while it waits rejects: the same name as Piscina's abort. */
function abortError(): Error {
  return Object.assign(new Error('The task was cancelled while queued'), { name: 'AbortError' });
}

/** What a cancellable caller hands in: a standard AbortSignal or the pool's Cancellation. */
interface Abortable {
  readonly aborted: boolean;
}
type CancelFollower = (signal: Abortable, listener: () => void) => () => void;

/**
 * The queue discipline in front of the pool's threads, in one unit:
 *
 * - **admission by time**: a task is admitted only if the work estimated
 *   ahead of it (its fair share of the queue, and what the threads still
 *   have to do) plus its own estimated run time fits before its deadline;
 *   otherwise it is refused at once (`deadline`). `maxQueue` is a memory
 *   backstop only (`backstop`).
 * - **CoDel and adaptive LIFO**: while the queue delay stays above the target
 *   (`codel.ts`), each key's newest waiting task runs first, since its client
 *   is the most surely still there, and a task without a client deadline
 *   that would wait longer than the target plus its own run time is refused
 *   (`queue-delay`); FIFO otherwise.
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
    'queue-delay': 0,
    backstop: 0,
  };
  private jobsRunning = 0;
  private readonly batches = { sent: 0, tasks: 0 };
  private readonly now: () => number;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly follow: CancelFollower,
  ) {
    this.costs = new CostModel(options.costPriorMs);
    this.codel = new CoDel({ targetMs: options.targetDelayMs, intervalMs: options.intervalMs });
    this.now = options.now ?? (() => performance.now());
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
    const cost = this.costs.estimate(ticket.task, ticket.size);
    const refused = this.admit(ticket, cost, now);
    if (refused !== undefined) return Promise.reject(refused);

    return new Promise<T>((resolve, reject) => {
      let stopFollowing: () => void = () => undefined;
      const waiting: Waiting = {
        key: ticket.key,
        cost,
        ticket,
        enqueuedAt: now,
        batchable,
        place: 'line',
        begin: (batch, settled) => {
          stopFollowing();
          const started = startTask(start, batch);
          // Registered first, so the slot is settled (and the next task started) before the caller hears.
          started.then(
            () => settled(true),
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
      this.pump();
      // A task that found a thread free has started: it needs no rescue timer and no
      // listener for a cancellation while it waits (two allocations fewer per task).
      if (waiting.place === 'gone') return;
      this.armRescue(waiting, now);
      stopFollowing = this.follow(signal, () => {
        if (this.leave(waiting)) reject(abortError());
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
  private admit(ticket: Ticket, cost: number, now: number): AppError | undefined {
    const { slots, maxQueue } = this.options;
    if (this.queued >= maxQueue && !this.makeRoomFor(ticket)) {
      return this.refuse('backstop', this.backlogMs() / slots);
    }
    const aheadMs = this.workAhead(ticket.key, cost);
    const waitMs = this.estimatedWait(aheadMs, now);
    if (now + waitMs + cost > ticket.deadlineAt) return this.refuse('deadline', waitMs);
    // Only the queued work counts here: waiting for a running task to end is
    // no queue's fault, and no shedding could shorten it.
    const queueDelayMs = aheadMs / slots;
    if (
      this.codel.overloaded &&
      this.patienceUnknown(ticket) &&
      queueDelayMs > this.options.targetDelayMs + cost
    ) {
      return this.refuse('queue-delay', waitMs);
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
    if (shed === undefined && (this.codel.overloaded || !this.patienceUnknown(ticket))) {
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

  /** Queued work that runs before a new task of `key`: its fair share of the lines. */
  private workAhead(key: string, cost: number): number {
    return this.queue.workAhead(key, cost, this.order());
  }

  /**
   * When a task with `aheadMs` of queued work before it would start: as the
   * running tasks end (by their estimates), the threads take up that work.
   */
  private estimatedWait(aheadMs: number, now: number): number {
    const freeAt: number[] = [];
    for (const task of this.running) freeAt.push(Math.max(0, task.cost - (now - task.startedAt)));
    while (freeAt.length < this.options.slots) freeAt.push(0);
    return threadTimeUntil(freeAt, aheadMs);
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
      if (now + next.cost > next.ticket.deadlineAt) {
        next.fail(this.refuse('deadline', this.backlogMs() / this.options.slots));
        continue;
      }
      const delayMs = now - next.enqueuedAt;
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
    const cost = members.reduce((sum, member) => sum + member.cost, 0);
    const thread: Running = { cost, startedAt: this.now() };
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
      member.begin(batch, (completed) => {
        const elapsed = (this.now() - thread.startedAt) / members.length;
        const { task, size } = member.ticket;
        if (completed) this.costs.record(task, elapsed, size);
        else this.costs.recordAtLeast(task, elapsed, size);
        unsettled -= 1;
        if (unsettled > 0) return;
        this.running.delete(thread);
        if (jobs) this.jobsRunning -= 1;
        this.pump();
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
        waiting.timer = setTimeout(
          () => this.shedLate(waiting),
          Math.max(0, latestStart - this.now()),
        );
        this.pump();
      },
      // Whole milliseconds: timers of one duration share Node's list for it (worker-pool.service.ts).
      Math.max(0, Math.ceil(rescueAt - now)),
    );
  }

  private shedLate(waiting: Waiting): void {
    if (!this.leave(waiting)) return;
    waiting.fail(this.refuse('deadline', this.backlogMs() / this.options.slots));
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

  private refuse(reason: RefusalReason, estimateMs: number): AppError {
    this.refused[reason] += 1;
    return refusal(reason, estimateMs, this.options.maxRetryAfterSeconds);
  }

  private order(): ServeOrder {
    return this.codel.overloaded ? 'lifo' : 'fifo';
  }
}
