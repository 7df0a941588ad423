import fc from 'fast-check';
import { Cancellation, onCancel, type CancelSignal } from '../workers/cancellation';
import { sureAfterRuns } from './cost-model';
import { TaskScheduler } from './task-scheduler';

/** The largest size asked for. */
const MAX_SIZE = 10_000;

/**
 * A task whose true cost is `a + b·size^k`, with `b` such that the largest
 * size costs `spanMs` more than the smallest: costs spread over the range of
 * the deadlines. Each run takes the cost times a noise in [1 - e, 1 + e].
 */
const taskShape = fc.record({
  fixedMs: fc.double({ min: 0.1, max: 5, noNaN: true }),
  spanMs: fc.double({ min: 20, max: 5000, noNaN: true }),
  exponent: fc.double({ min: 0.5, max: 2, noNaN: true }),
  noise: fc.double({ min: 0, max: 0.2, noNaN: true }),
});
type Shape = { fixedMs: number; spanMs: number; exponent: number; noise: number };
const costOf = (shape: Shape, size: number) =>
  shape.fixedMs + shape.spanMs * (size / MAX_SIZE) ** shape.exponent;
/** Sizes over four orders of magnitude, evenly on a log scale. */
const size = fc
  .double({ min: 0, max: Math.log10(MAX_SIZE), noNaN: true })
  .map((exponent) => Math.round(10 ** exponent));
const jitter = fc.double({ min: -1, max: 1, noNaN: true });

/**
 * A scheduler on a simulated clock whose tasks run for the time they are
 * given: a run that would pass its deadline is stopped there, as the pool's
 * deadline stops it, and the scheduler measures it as a stopped run.
 */
function simulation(slots: number) {
  let now = 0;
  const running = new Set<{ endAt: number; end: () => void }>();
  const scheduler = new TaskScheduler(
    {
      slots,
      maxQueue: 10_000,
      targetDelayMs: 1_000_000,
      intervalMs: 1_000_000,
      costPriorMs: 50,
      jobsMaxThreads: slots,
      maxRetryAfterSeconds: 30,
      now: () => now,
    },
    (signal, listener) => onCancel(signal as CancelSignal, listener),
  );
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    scheduler,
    get now() {
      return now;
    },
    /** Asks to run a task of `size` taking `runMs`, due `deadlineMs` from now; resolves with its end. */
    submit(sizeOfTask: number, runMs: number, deadlineMs: number) {
      const deadlineAt = now + deadlineMs;
      return scheduler
        .run(
          { task: 'task', size: sizeOfTask, key: 'k', deadlineAt, clientDeadline: true },
          () =>
            new Promise<number>((resolve, reject) => {
              const stopped = now + runMs > deadlineAt;
              running.add({
                endAt: Math.min(now + runMs, deadlineAt),
                end: () => (stopped ? reject(new Error('timeout')) : resolve(now)),
              });
            }),
          new Cancellation(),
        )
        .then(
          (endedAt) => ({ outcome: 'done' as const, at: endedAt, deadlineAt }),
          (error: { facts?: { reason?: string } }) => ({
            outcome:
              error.facts?.reason === undefined ? ('stopped' as const) : ('refused' as const),
            at: now,
            deadlineAt,
          }),
        );
    },
    /**
     * Moves the clock to `until`, ending the runs due: a millisecond at a time
     * while the scheduler has timers set, else straight to the next run's end.
     */
    async runUntil(until: number) {
      while (now < until) {
        await settle();
        let step = 1;
        if (jest.getTimerCount() === 0) {
          let next = until;
          for (const run of running) next = Math.min(next, run.endAt);
          step = Math.max(1, Math.ceil(next - now));
        }
        now += step;
        jest.advanceTimersByTime(step);
        for (const run of [...running]) {
          if (run.endAt > now) continue;
          running.delete(run);
          run.end();
        }
        await settle();
      }
    },
    /** Runs what is running to its end. */
    async drain() {
      while (running.size > 0 || scheduler.queued > 0) {
        let next = Infinity;
        for (const run of running) next = Math.min(next, run.endAt);
        await this.runUntil(Number.isFinite(next) ? Math.max(now + 1, Math.ceil(next)) : now + 1);
      }
    },
  };
}

// Each property simulates thousands of runs: on a busy machine that takes seconds.
jest.setTimeout(60_000);

describe(`${TaskScheduler.name} properties`, () => {
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('never refuses, on an idle pool, a task whose true cost fits its deadline, whatever came before', async () => {
    await fc.assert(
      fc.asyncProperty(
        taskShape,
        fc.array(fc.tuple(size, jitter, fc.integer({ min: 20, max: 2000 })), {
          minLength: 40,
          maxLength: 100,
        }),
        async (shape, requests) => {
          const sim = simulation(2);
          for (const [units, at, deadlineMs] of requests) {
            const trueMs = costOf(shape, units);
            const result = sim.submit(units, trueMs * (1 + shape.noise * at), deadlineMs);
            await sim.drain();
            const { outcome } = await result;
            if (trueMs * (1 + shape.noise) <= deadlineMs) expect(outcome).not.toBe('refused');
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  /**
   * A task of 20-60 ms and a burst of it that needs about twice its deadline;
   * `warm`: the model measured it first.
   */
  async function burstOutcomes(
    shape: Shape,
    perThread: number,
    slots: number,
    jitters: number[],
    warm: boolean,
  ) {
    const units = Math.round(
      MAX_SIZE * ((40 - shape.fixedMs) / shape.spanMs) ** (1 / shape.exponent),
    );
    const trueMs = costOf(shape, units);
    fc.pre(units >= 1 && trueMs >= 20 && trueMs <= 60);
    const runMs = (index: number) =>
      trueMs * (1 + shape.noise * (jitters[index % jitters.length] as number));
    const sim = simulation(slots);
    for (let run = 0; warm && run < sureAfterRuns(slots); run++) {
      const measured = sim.submit(units, runMs(run), 10_000);
      await sim.drain();
      await measured;
    }
    const burst = perThread * slots;
    const deadlineMs = Math.ceil((perThread * trueMs) / 2);
    const startedAt = sim.now;
    const results = Array.from({ length: burst }, (_, index) =>
      sim.submit(units, runMs(index), deadlineMs),
    );
    await sim.drain();
    return { outcomes: await Promise.all(results), startedAt, deadlineMs };
  }

  const burstArguments = [
    taskShape,
    fc.integer({ min: 20, max: 60 }),
    fc.integer({ min: 1, max: 3 }),
    fc.array(jitter, { minLength: 200, maxLength: 200 }),
  ] as const;

  it('refuses at once what a measured queue cannot finish before its deadline', async () => {
    await fc.assert(
      fc.asyncProperty(...burstArguments, async (shape, perThread, slots, jitters) => {
        const { outcomes, startedAt } = await burstOutcomes(shape, perThread, slots, jitters, true);
        const refused = outcomes.filter(({ outcome }) => outcome === 'refused');
        expect(refused.length).toBeGreaterThan(0);
        expect(outcomes.some(({ outcome }) => outcome === 'done')).toBe(true);
        // At arrival, but for those admitted on a floor below the true cost (a
        // fast run among the measured ones), refused later at their latest
        // start: per thread, about (deadline / cost) × noise / (1 - noise).
        const late = refused.filter(({ at }) => at !== startedAt).length;
        const slack = ((perThread / 2) * shape.noise) / (1 - shape.noise);
        expect(late).toBeLessThanOrEqual(slots * (slack + 2));
        for (const { at, deadlineAt } of refused) expect(at).toBeLessThan(deadlineAt);
      }),
      { numRuns: 25 },
    );
  });

  it('refuses what a cold burst cannot finish soon after its first runs, long before the deadline', async () => {
    await fc.assert(
      fc.asyncProperty(...burstArguments, async (shape, perThread, slots, jitters) => {
        const { outcomes, deadlineMs } = await burstOutcomes(
          shape,
          perThread,
          slots,
          jitters,
          false,
        );
        const refused = outcomes.filter(({ outcome }) => outcome === 'refused');
        expect(refused.length).toBeGreaterThan(0);
        // Within the first half of the deadline, but for those admitted on a
        // floor below the true cost, as above.
        const late = refused.filter(({ at, deadlineAt }) => at > deadlineAt - deadlineMs / 2);
        const slack = ((perThread / 2) * shape.noise) / (1 - shape.noise);
        expect(late.length).toBeLessThanOrEqual(slots * (slack + 2));
        for (const { at, deadlineAt } of refused) expect(at).toBeLessThan(deadlineAt);
      }),
      { numRuns: 25 },
    );
  });
});
