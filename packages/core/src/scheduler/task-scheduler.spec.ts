import { JOBS_CLIENT_KEY } from './client-keys';
import { Cancellation, onCancel, type CancelSignal } from '../workers/cancellation';
import {
  PROBE_AFTER_MS,
  TaskScheduler,
  type SchedulerOptions,
  type Ticket,
} from './task-scheduler';

/** A task the test ends by hand, and the order in which tasks started. */
interface Harness {
  scheduler: TaskScheduler;
  started: string[];
  /** Ends the running task `name` after `ms` of the test clock. */
  finish(name: string, ms?: number): Promise<void>;
  submit(name: string, ticket?: Partial<Ticket>, signal?: Cancellation): Promise<string>;
  /** Runs `task` alone `runs` times, each taking `ms`: the model then knows its cost. */
  measure(task: string, ms: number, runs?: number, size?: number): Promise<void>;
  advance(ms: number): void;
  /** A client gives up on a task that waits: the evidence that turns a standing queue into overload. */
  giveUp(): Promise<void>;
  /** Moves the test clock and the fake timers together, a millisecond at a time. */
  elapse(ms: number): void;
  readonly clock: { now: number };
}

function harness(options: Partial<SchedulerOptions> = {}): Harness {
  const clock = { now: 0 };
  const scheduler = new TaskScheduler(
    {
      slots: 1,
      maxQueue: 100,
      targetDelayMs: 10,
      intervalMs: 50,
      costPriorMs: 10,
      jobsMaxThreads: 1,
      maxRetryAfterSeconds: 30,
      now: () => clock.now,
      ...options,
    },
    (signal, listener) => onCancel(signal as CancelSignal, listener),
  );
  const started: string[] = [];
  const enders = new Map<string, () => void>();
  return {
    scheduler,
    started,
    clock,
    advance: (ms) => {
      clock.now += ms;
    },
    async giveUp() {
      const signal = new Cancellation();
      const waiting = settled(this.submit('gives-up', {}, signal));
      signal.abort('cancelled');
      await waiting;
    },
    elapse: (ms) => {
      for (let i = 0; i < ms; i++) {
        clock.now += 1;
        jest.advanceTimersByTime(1);
      }
    },
    async finish(name, ms = 0) {
      clock.now += ms;
      const end = enders.get(name);
      if (end === undefined) throw new Error(`${name} is not running`);
      end();
      // Let the scheduler's settle handlers run and start the next task.
      await new Promise((resolve) => setImmediate(resolve));
    },
    async measure(task, ms, runs = 3, size = 1) {
      for (let run = 0; run < runs; run++) {
        const name = `${task}-measured-${run}`;
        const done = this.submit(name, { task, size });
        await this.finish(name, ms);
        await done;
      }
    },
    submit(name, ticket = {}, signal = new Cancellation()) {
      return scheduler.run(
        { task: 'work', size: 1, key: 'a', deadlineAt: 1e9, clientDeadline: true, ...ticket },
        () =>
          new Promise<string>((resolve) => {
            started.push(name);
            enders.set(name, () => resolve(name));
          }),
        signal,
      );
    },
  };
}

/** A harness in overload mode (newest first): tasks of 100 ms, a 10 ms target, one left waiting. */
async function overloaded(): Promise<Harness> {
  const h = harness({ targetDelayMs: 10, intervalMs: 50, costPriorMs: 100 });
  void h.submit('running');
  void h.submit('b');
  // c and d run through the tests that follow, which measure only how long they waited.
  for (const name of ['c', 'd']) void h.submit(name, { task: 'blocker' });
  await h.giveUp();
  await h.finish('running', 100);
  await h.finish('b', 100);
  expect(h.scheduler.state().mode).toBe('lifo');
  return h;
}

/** Swallows the rejection now, so an unhandled rejection does not fail the test before it checks. */
const settled = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe(TaskScheduler.name, () => {
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('serves the oldest first while the queue delay stays under the target (FIFO)', async () => {
    const h = harness({ targetDelayMs: 1000 });
    void h.submit('running');
    for (const name of ['b', 'c', 'd']) void h.submit(name);
    await h.finish('running', 100);
    await h.finish('b', 100);
    await h.finish('c', 100);
    expect(h.started).toEqual(['running', 'b', 'c', 'd']);
    expect(h.scheduler.state().mode).toBe('fifo');
  });

  it('serves the newest first once the delay stayed above the target for an interval and a client gave up (LIFO)', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50 });
    void h.submit('running');
    for (const name of ['b', 'c', 'd', 'e', 'f']) void h.submit(name);
    await h.giveUp();
    await h.finish('running', 100); // b waited 100 ms: above the target, the interval starts
    await h.finish('b', 100); // c waited 200 ms, the interval is over: overloaded
    expect(h.scheduler.state().mode).toBe('lifo');
    await h.finish('c', 100);
    await h.finish('f', 100);
    await h.finish('e', 100);
    expect(h.started).toEqual(['running', 'b', 'c', 'f', 'e', 'd']);
  });

  it('serves a patient crowd in line: a standing queue whose clients all wait is no overload', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50, costPriorMs: 100 });
    void h.submit('running', { clientDeadline: false });
    const crowd = ['b', 'c', 'd', 'e', 'f'].map((name) =>
      h.submit(name, { clientDeadline: false }),
    );
    await h.finish('running', 100);
    await h.finish('b', 100); // c waited 200 ms: a standing queue, but nobody gave up
    expect(h.scheduler.state().mode).toBe('fifo');
    // A newcomer without a deadline waits 300 ms behind d, e and f, well past
    // the target plus its own 100 ms: it still waits, in line.
    crowd.push(h.submit('g', { clientDeadline: false }));
    for (const name of ['c', 'd', 'e', 'f', 'g']) await h.finish(name, 100);
    await expect(Promise.all(crowd)).resolves.toEqual(['b', 'c', 'd', 'e', 'f', 'g']);
    expect(h.started).toEqual(['running', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(h.scheduler.state().refusals).toEqual({
      deadline: 0,
      'too-long': 0,
      'queue-delay': 0,
      backstop: 0,
    });
  });

  it('counts a task shed for its deadline as a client giving up', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50 });
    await h.measure('work', 100, 4);
    void h.submit('running');
    // Admitted behind a run of 100 ms; the run takes longer, and its latest start passes.
    const late = settled(h.submit('late', { deadlineAt: h.clock.now + 250 }));
    for (const name of ['b', 'c', 'd']) void h.submit(name);
    h.elapse(160);
    expect(await late).toMatchObject({ facts: { reason: 'too-long' } });
    await h.finish('running', 140);
    await h.finish('b', 100); // c waited 400 ms: a standing queue, and a deadline was missed
    expect(h.scheduler.state().mode).toBe('lifo');
  });

  it('returns to FIFO once no client gave up for two windows, the queue still standing', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50 });
    void h.submit('running');
    for (const name of ['b', 'c', 'd', 'e', 'f', 'g', 'h']) void h.submit(name);
    await h.giveUp();
    await h.finish('running', 100);
    await h.finish('b', 100);
    expect(h.scheduler.state().mode).toBe('lifo');
    await h.finish('c', 10_000); // two windows (10 × 50 ms, at least 5 s) since the client gave up
    expect(h.scheduler.state().mode).toBe('fifo');
    expect(h.started).toEqual(['running', 'b', 'c', 'd']);
  });

  it('returns to FIFO once the queue has emptied', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50 });
    void h.submit('running');
    for (const name of ['b', 'c', 'd']) void h.submit(name);
    await h.giveUp();
    await h.finish('running', 100);
    await h.finish('b', 100);
    expect(h.scheduler.state().mode).toBe('lifo');
    await h.finish('c', 10);
    expect(h.scheduler.state()).toMatchObject({ mode: 'fifo', queued: 0 });
  });

  it('refuses at once, without running it, a task that the work ahead leaves no time', async () => {
    const h = harness({ costPriorMs: 100 });
    await h.measure('work', 100);
    h.started.length = 0;
    void h.submit('running');
    void h.submit('b');
    // Ahead of it: b (100 ms) and what is left of the running task (100 ms), then its own 100 ms.
    const late = settled(h.submit('late', { deadlineAt: h.clock.now + 250 }));
    const inTime = h.submit('in-time', { deadlineAt: h.clock.now + 350 });
    const refused = await late;
    expect(refused).toMatchObject({
      code: 'POOL_SATURATED',
      facts: { reason: 'deadline', retryAfterSeconds: 1 },
    });
    expect((refused as Error).message).toContain(
      'about 200 ms of work ahead of it and 100 ms of its own; 250 ms left',
    );
    expect(h.started).toEqual(['running']);
    expect(h.scheduler.state().refusals.deadline).toBe(1);
    await h.finish('running', 100);
    await h.finish('b', 100);
    await h.finish('in-time', 100);
    await expect(inTime).resolves.toBe('in-time');
  });

  it('admits what the prior alone would refuse: a guess is never a reason to say no', async () => {
    const h = harness({ costPriorMs: 10_000 });
    void h.submit('running');
    const queued = h.submit('queued', { deadlineAt: h.clock.now + 500 });
    await h.finish('running', 100);
    await h.finish('queued', 100);
    await expect(queued).resolves.toBe('queued');
  });

  it('refuses by its measured runs, once they are enough to go by', async () => {
    const h = harness({ costPriorMs: 1 });
    await h.measure('work', 400, 1);
    // One run may be an outlier: still admitted.
    const admitted = h.submit('admitted', { deadlineAt: h.clock.now + 300 });
    await h.finish('admitted', 400);
    await expect(admitted).resolves.toBe('admitted');
    void h.submit('running');
    // Two runs of 400 ms: 400 ms are surely ahead of it, and 400 ms for itself.
    const refused = settled(h.submit('late', { deadlineAt: h.clock.now + 700 }));
    expect(await refused).toMatchObject({ facts: { reason: 'deadline' } });
  });

  it('refuses a task whose own measured cost is longer than its deadline, even on an idle pool', async () => {
    const h = harness();
    await h.measure('work', 400);
    const refused = await settled(h.submit('alone', { deadlineAt: h.clock.now + 300 }));
    expect(refused).toMatchObject({ facts: { reason: 'too-long', retryAfterSeconds: 10 } });
    expect((refused as Error).message).toContain('about 400 ms of its own');
    expect(h.scheduler.state().refusals['too-long']).toBe(1);
  });

  describe('a cheap request after dear runs at its size (cost classes, clients)', () => {
    /** Client x's four dear runs of `pdf` at one size, reading every page. */
    async function poisoned(): Promise<Harness> {
      const h = harness();
      const dear = { task: 'pdf', size: 1000, costClass: 'pages-4096', key: 'x' };
      for (let run = 0; run < 4; run++) {
        const done = h.submit(`dear-${run}`, dear);
        await h.finish(`dear-${run}`, 900);
        await done;
      }
      // The runs are sure for their class and client: the same request with 700 ms left is refused.
      expect(
        await settled(h.submit('same', { ...dear, deadlineAt: h.clock.now + 700 })),
      ).toMatchObject({ facts: { reason: 'too-long' } });
      return h;
    }

    it('admits a request of another cost class at the same size, from the same client', async () => {
      const h = await poisoned();
      const cheap = h.submit('cheap', {
        task: 'pdf',
        size: 1000,
        costClass: 'pages-1',
        key: 'x',
        deadlineAt: h.clock.now + 700,
      });
      expect(h.started.at(-1)).toBe('cheap');
      await h.finish('cheap', 25);
      await expect(cheap).resolves.toBe('cheap');
    });

    it("admits another client's request of the same class: one client's inputs refuse only that client", async () => {
      const h = await poisoned();
      const victim = { task: 'pdf', size: 1000, costClass: 'pages-4096', key: 'y' };
      const cheap = h.submit('cheap', { ...victim, deadlineAt: h.clock.now + 700 });
      expect(h.started.at(-1)).toBe('cheap');
      await h.finish('cheap', 25);
      await expect(cheap).resolves.toBe('cheap');
      // Its run is y's: the runs are now two clients', and they disagree widely, so nothing is sure.
      const next = h.submit('next', { ...victim, deadlineAt: h.clock.now + 700 });
      expect(h.started.at(-1)).toBe('next');
      await h.finish('next', 25);
      await expect(next).resolves.toBe('next');
    });
  });

  it('lets an idle thread probe a refused size again once its runs are old, so no size is locked out', async () => {
    const h = harness();
    await h.measure('work', 400);
    expect(await settled(h.submit('refused', { deadlineAt: h.clock.now + 300 }))).toMatchObject({
      facts: { reason: 'too-long' },
    });
    h.advance(PROBE_AFTER_MS);
    // The machine is quiet now: the probe runs in 200 ms, and is measured.
    const probe = h.submit('probe', { deadlineAt: h.clock.now + 300 });
    expect(await settled(h.submit('busy', { deadlineAt: h.clock.now + 300 }))).toMatchObject({
      facts: { reason: 'too-long' },
    });
    await h.finish('probe', 200);
    await expect(probe).resolves.toBe('probe');
    // Its floor now rests on the quick run too: the size is admitted again.
    const next = h.submit('next', { deadlineAt: h.clock.now + 300 });
    await h.finish('next', 200);
    await expect(next).resolves.toBe('next');
  });

  it('never refuses a size larger than any measured for what smaller ones cost', async () => {
    const h = harness();
    // Tiny inputs: the time is all fixed part.
    await h.measure('work', 2, 5, 4);
    const large = h.submit('large', { size: 40_000, deadlineAt: h.clock.now + 100 });
    expect(h.started.at(-1)).toBe('large');
    await h.finish('large', 20);
    await expect(large).resolves.toBe('large');
  });

  it('sheds a waiting task once it can no longer start in time, before its deadline', async () => {
    const h = harness({ costPriorMs: 100 });
    await h.measure('work', 100);
    void h.submit('running', { task: 'blocker' });
    const waiting = settled(h.submit('waiting', { deadlineAt: h.clock.now + 1000 }));
    // The running task overruns. At 450 ms (half way to its latest start,
    // 900 ms) it is moved ahead; at 900 ms it is shed.
    h.elapse(899);
    expect(h.scheduler.state().queued).toBe(1);
    h.elapse(1);
    expect(await waiting).toMatchObject({ code: 'POOL_SATURATED', facts: { reason: 'too-long' } });
    expect(h.scheduler.state().queued).toBe(0);
  });

  it('looks again when runs complete, and refuses then the waiting tasks that can no longer finish', async () => {
    const h = harness({ slots: 2 });
    // A cold burst: nothing measured yet, so every task is admitted.
    const burst = Array.from({ length: 12 }, (_, i) =>
      settled(h.submit(`t${i}`, { deadlineAt: h.clock.now + 1000 })),
    );
    expect(h.scheduler.state().queued).toBe(10);
    h.elapse(300);
    await h.finish('t0');
    await h.finish('t1');
    // The first wave (one run per thread) agrees closely: it counts, floored at two thirds
    // of its runs, as first runs may all be slow alike. At 200 ms each, t8 to t11 cannot
    // start before 900 ms: refused now, 670 ms before their deadline.
    h.elapse(30);
    await Promise.resolve();
    expect(h.scheduler.state().refusals.deadline).toBe(4);
    h.elapse(270);
    await h.finish('t2');
    await h.finish('t3');
    // Four runs of 300 ms, two on each thread, by 600 ms: t4 and t5 end at
    // 900 ms, the six behind them cannot end by 1,000 ms. Within the next
    // check they are refused, nearly 400 ms before their deadline.
    h.elapse(30);
    const outcomes = await Promise.all(burst.slice(6));
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ code: 'POOL_SATURATED', facts: { reason: 'deadline' } });
    }
    expect(h.scheduler.state().refusals.deadline).toBe(6);
    expect(h.scheduler.state().queued).toBe(0);
  });

  it('refuses past the memory backstop', async () => {
    const h = harness({ maxQueue: 1 });
    void h.submit('running');
    void h.submit('b');
    expect(await settled(h.submit('c'))).toMatchObject({ facts: { reason: 'backstop' } });
  });

  it("makes room in a full queue for another key by shedding the flood's oldest task", async () => {
    const h = harness({ maxQueue: 2 });
    void h.submit('running', { key: 'flood' });
    const oldest = settled(h.submit('flood-1', { key: 'flood' }));
    void h.submit('flood-2', { key: 'flood' });
    const trickle = h.submit('trickle', { key: 'trickle' });
    expect(await oldest).toMatchObject({ facts: { reason: 'backstop' } });
    expect(await settled(h.submit('flood-3', { key: 'flood' }))).toMatchObject({
      facts: { reason: 'backstop' },
    });
    for (let i = 0; i < 3; i++) await h.finish(h.started.at(-1) as string, 10);
    await expect(trickle).resolves.toBe('trickle');
    expect(h.started).toEqual(expect.arrayContaining(['flood-2', 'trickle']));
  });

  it('sheds the oldest undated task for a newcomer when the queue is full while overloaded', async () => {
    const h = harness({ maxQueue: 3, targetDelayMs: 10, intervalMs: 50 });
    void h.submit('running', { clientDeadline: false });
    await h.giveUp();
    const waiting = ['b', 'c', 'd'].map((name) =>
      settled(h.submit(name, { clientDeadline: false })),
    );
    await h.finish('running', 100);
    await h.finish('b', 100); // c waited 200 ms: overloaded
    void h.submit('e', { clientDeadline: false });
    void h.submit('f', { clientDeadline: false });
    // Full (d, e, f): g takes the place of the oldest, d.
    void h.submit('g', { clientDeadline: false });
    expect(await waiting[2]).toMatchObject({ facts: { reason: 'queue-delay' } });
    await h.finish('c', 10);
    expect(h.started.at(-1)).toBe('g');
  });

  it('makes room in a full queue for a task with a client deadline by shedding the oldest undated one, overloaded or not', async () => {
    const h = harness({ maxQueue: 3 });
    void h.submit('running');
    // The oldest waiting task is a patient one; the undated ones behind it may go.
    const patient = h.submit('patient', { clientDeadline: true });
    const undated = ['u1', 'u2'].map((name) => settled(h.submit(name, { clientDeadline: false })));
    expect(h.scheduler.state().mode).toBe('fifo');
    const late = h.submit('late-patient', { clientDeadline: true });
    expect(await undated[0]).toMatchObject({ facts: { reason: 'queue-delay' } });
    // An undated newcomer still finds the queue full: no room is made for it while not overloaded.
    expect(await settled(h.submit('u3', { clientDeadline: false }))).toMatchObject({
      facts: { reason: 'backstop' },
    });
    for (let i = 0; i < 4; i++) await h.finish(h.started.at(-1) as string, 1);
    await expect(patient).resolves.toBe('patient');
    await expect(late).resolves.toBe('late-patient');
  });

  it('refuses, while overloaded, a task without a client deadline that would wait past the target', async () => {
    const h = harness({ targetDelayMs: 10, intervalMs: 50, costPriorMs: 100 });
    void h.submit('running', { key: 'a' });
    for (const name of ['b', 'c', 'd', 'e']) void h.submit(name, { key: 'a' });
    for (const name of ['x', 'y']) void h.submit(name, { key: 'x' });
    await h.giveUp();
    await h.finish('running', 100);
    await h.finish(h.started.at(-1) as string, 100);
    expect(h.scheduler.state().mode).toBe('lifo');
    // A third key's newcomer has a share of each other line queued ahead of it: 200 ms, past 10 + 100.
    const undated = settled(h.submit('undated', { key: 'z', clientDeadline: false }));
    expect(await undated).toMatchObject({ facts: { reason: 'queue-delay' } });
    const dated = h.submit('dated', { key: 'z', clientDeadline: true });
    for (let i = 0; i < 6; i++) await h.finish(h.started.at(-1) as string, 100);
    await expect(dated).resolves.toBe('dated');
  });

  it('rescues a waiting task before its deadline while newer ones keep overtaking it', async () => {
    const h = await overloaded();
    const old = h.submit('old', { deadlineAt: h.clock.now + 1000 });
    for (let i = 1; i <= 3; i++) {
      void h.submit(`new-${i}`);
      await h.finish(h.started.at(-1) as string, 100);
    }
    expect(h.started).not.toContain('old');
    // Its latest start is 900 ms after it arrived; half way there, it is rescued.
    jest.advanceTimersByTime(800);
    void h.submit('new-4');
    await h.finish(h.started.at(-1) as string, 100);
    expect(h.started.at(-1)).toBe('old');
    await h.finish('old', 100);
    await expect(old).resolves.toBe('old');
  });

  it('rescues a patient task half way to its latest start, not only one run time before it', async () => {
    const h = await overloaded();
    // Latest start 1,900 ms after it arrives: rescued at 950 ms, long before 1,790 ms.
    const old = h.submit('old', { deadlineAt: h.clock.now + 2000 });
    h.elapse(960);
    void h.submit('new');
    await h.finish(h.started.at(-1) as string, 100);
    expect(h.started.at(-1)).toBe('old');
    await h.finish('old', 100);
    await expect(old).resolves.toBe('old');
  });

  it("keeps fair turns when a flood's tasks are rescued: they move ahead in their own key only", async () => {
    const h = harness({ costPriorMs: 100 });
    void h.submit('running', { key: 'flood', task: 'blocker' });
    for (let i = 1; i <= 4; i++) {
      void h.submit(`flood-${i}`, { key: 'flood', deadlineAt: 1700 + i });
    }
    const trickle = h.submit('trickle', { key: 'trickle' });
    // Every flood task reaches its rescue time (latest start less its run time and the target).
    h.elapse(1500);
    await h.finish('running', 10);
    await h.finish(h.started.at(-1) as string, 10);
    expect(h.started.slice(1, 3)).toContain('trickle');
    await h.finish('trickle', 10);
    await expect(trickle).resolves.toBe('trickle');
  });

  it('gives a trickle key its turn while another key floods the queue', async () => {
    const h = harness();
    void h.submit('running', { key: 'flood' });
    for (let i = 0; i < 20; i++) void h.submit(`flood-${i}`, { key: 'flood' });
    const trickle = h.submit('trickle', { key: 'trickle' });
    await h.finish('running', 10);
    await h.finish(h.started.at(-1) as string, 10);
    expect(h.started).toContain('trickle');
    expect(h.started.indexOf('trickle')).toBeLessThanOrEqual(2);
    await h.finish('trickle', 10);
    await expect(trickle).resolves.toBe('trickle');
  });

  it('shares by cost: a key of expensive tasks gets fewer of them per round', async () => {
    const h = harness({ costPriorMs: 10 });
    // Teach it that `big` costs 40 ms and `small` 10 ms.
    void h.submit('b0', { task: 'big' });
    await h.finish('b0', 40);
    void h.submit('s0', { task: 'small' });
    await h.finish('s0', 10);
    void h.submit('running', { key: 'x' });
    for (let i = 1; i <= 4; i++) void h.submit(`big-${i}`, { key: 'big', task: 'big' });
    for (let i = 1; i <= 8; i++) void h.submit(`small-${i}`, { key: 'small', task: 'small' });
    await h.finish('running', 1);
    for (let i = 0; i < 5; i++) await h.finish(h.started.at(-1) as string, 1);
    const served = h.started.slice(3);
    expect(served.filter((name) => name.startsWith('small')).length).toBeGreaterThanOrEqual(4);
    expect(served.filter((name) => name.startsWith('big')).length).toBeLessThanOrEqual(2);
  });

  it('caps the threads jobs hold, and lets other keys use the rest', async () => {
    const h = harness({ slots: 2, jobsMaxThreads: 1 });
    void h.submit('job-1', { key: JOBS_CLIENT_KEY });
    void h.submit('job-2', { key: JOBS_CLIENT_KEY });
    expect(h.started).toEqual(['job-1']);
    void h.submit('client', { key: 'a' });
    expect(h.started).toEqual(['job-1', 'client']);
    await h.finish('job-1', 10);
    expect(h.started).toEqual(['job-1', 'client', 'job-2']);
  });

  it("learns a task's cost from its thread's own clock, not from how late a busy loop read the answer", async () => {
    const clock = { now: 0 };
    const scheduler = new TaskScheduler(
      {
        slots: 1,
        maxQueue: 100,
        targetDelayMs: 10,
        intervalMs: 50,
        costPriorMs: 10,
        jobsMaxThreads: 1,
        maxRetryAfterSeconds: 30,
        now: () => clock.now,
        threadMsOf: (result) => (result as { runMs: number }).runMs,
      },
      (signal, listener) => onCancel(signal as CancelSignal, listener),
    );
    const ticket = (deadlineAt: number): Ticket => ({
      task: 'tiny',
      size: 1,
      key: 'a',
      deadlineAt,
      clientDeadline: false,
    });
    // Each run took 1 ms on its thread; its answer was read 500 ms later, the loop being busy.
    for (let run = 0; run < 4; run++) {
      await scheduler.run(
        ticket(1e9),
        () => {
          clock.now += 500;
          return Promise.resolve({ runMs: 1 });
        },
        new Cancellation(),
      );
    }
    // Behind one running and three waiting such tasks, 50 ms is plenty.
    let release: () => void = () => undefined;
    const running = scheduler.run(
      ticket(1e9),
      () => new Promise<{ runMs: number }>((done) => (release = () => done({ runMs: 1 }))),
      new Cancellation(),
    );
    const crowd = [0, 1, 2].map(() =>
      scheduler.run(
        ticket(clock.now + 50),
        () => Promise.resolve({ runMs: 1 }),
        new Cancellation(),
      ),
    );
    release();
    await expect(Promise.all([running, ...crowd])).resolves.toHaveLength(4);
    expect(scheduler.state().refusals).toMatchObject({ deadline: 0, 'too-long': 0 });
  });

  it('rejects with an AbortError and never starts a task cancelled while it waits', async () => {
    const h = harness();
    void h.submit('running');
    const signal = new Cancellation();
    const waiting = settled(h.submit('waiting', {}, signal));
    signal.abort('cancelled');
    expect(await waiting).toMatchObject({ name: 'AbortError' });
    await h.finish('running', 10);
    expect(h.started).toEqual(['running']);
    expect(h.scheduler.queued).toBe(0);
  });

  describe('batches', () => {
    /**
     * A scheduler with batches of up to 3 tasks measured at 1 ms each: `batches`
     * lists the tasks each batch carried, `alone` the tasks that went alone.
     */
    async function batching(maxCostMs = 10) {
      let now = 0;
      const batches: string[][] = [];
      const alone: string[] = [];
      const enders = new Map<string, () => void>();
      const scheduler = new TaskScheduler(
        {
          slots: 1,
          maxQueue: 100,
          targetDelayMs: 1000,
          intervalMs: 50,
          costPriorMs: 1,
          jobsMaxThreads: 1,
          maxRetryAfterSeconds: 30,
          now: () => now,
          batch: {
            maxTasks: 3,
            maxCostMs,
            open: () => {
              const members: string[] = [];
              return Object.assign(members, { close: () => void batches.push([...members]) });
            },
          },
        },
        (signal, listener) => onCancel(signal as CancelSignal, listener),
      );
      const submit = (name: string, ticket: Partial<Ticket> = {}, batchable = true) =>
        scheduler.run(
          { task: 'small', size: 1, key: 'a', deadlineAt: 1e9, clientDeadline: true, ...ticket },
          (batch) =>
            new Promise<string>((resolve) => {
              if (batch === undefined) alone.push(name);
              else (batch as unknown as string[]).push(name);
              enders.set(name, () => resolve(name));
            }),
          new Cancellation(),
          batchable,
        );
      const finish = async (...names: string[]) => {
        for (const name of names) enders.get(name)?.();
        await new Promise((resolve) => setImmediate(resolve));
      };
      // Only tasks measured at their size are batched: three runs of 1 ms.
      for (const name of ['m1', 'm2', 'm3']) {
        void submit(name, {}, false);
        now += 1;
        await finish(name);
      }
      alone.length = 0;
      return { scheduler, batches, alone, submit, finish };
    }

    it('sends the small tasks that wait to a free thread together, in one slot', async () => {
      const b = await batching();
      void b.submit('running');
      for (const name of ['b', 'c', 'd', 'e']) void b.submit(name);
      await b.finish('running');
      expect(b.alone).toEqual(['running']);
      expect(b.batches).toEqual([['b', 'c', 'd']]);
      expect(b.scheduler.state().batches).toEqual({ sent: 1, tasks: 3 });
      // The batch holds the one slot until its last task has settled.
      await b.finish('b', 'c');
      expect(b.alone).toEqual(['running']);
      await b.finish('d');
      expect(b.alone).toEqual(['running', 'e']);
    });

    it('batches only tasks whose estimates fit its budget, and never jobs or tasks that must go alone', async () => {
      const b = await batching(2.5);
      void b.submit('running');
      void b.submit('b');
      void b.submit('body', { key: 'x' }, false);
      void b.submit('job', { key: JOBS_CLIENT_KEY });
      void b.submit('c', { key: 'y' });
      void b.submit('d', { key: 'z' });
      await b.finish('running');
      // b and c fit 2.5 ms; d would make 3. The others keep their turns.
      expect(b.batches).toEqual([['b', 'c']]);
      await b.finish('b', 'c');
      await b.finish('body');
      await b.finish('job');
      expect(b.alone).toEqual(['running', 'body', 'job', 'd']);
    });

    it('never reorders a key: a task that must go alone ends the batch at its place', async () => {
      const b = await batching();
      void b.submit('running');
      void b.submit('b');
      void b.submit('body', {}, false);
      void b.submit('c');
      await b.finish('running');
      expect(b.alone).toEqual(['running', 'b']);
      await b.finish('b');
      await b.finish('body');
      expect(b.alone).toEqual(['running', 'b', 'body', 'c']);
      expect(b.batches).toEqual([]);
    });
  });
});
