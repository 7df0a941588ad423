import fc from 'fast-check';
import { CostModel, costKeyOf, sureAfterRuns } from './cost-model';

/** The models below are of a one-thread pool. */
const SURE_AFTER_RUNS = sureAfterRuns(1);

/** Records `runs` runs of `task` at `size`, each taking `ms`. */
function measure(model: CostModel, task: string, size: number, ms: number, runs = SURE_AFTER_RUNS) {
  for (let run = 0; run < runs; run++) model.record(task, ms, size);
}

describe(CostModel.name, () => {
  it('estimates a task never measured at the prior, with no floor and unsure', () => {
    expect(new CostModel(50).estimate('hash', 1000)).toEqual({
      ms: 50,
      floorMs: 0,
      highMs: 50,
      seenMs: 0,
      fastestMs: 0,
      sure: false,
    });
  });

  it('is sure of a size, and has a floor there, only after a few runs', () => {
    const model = new CostModel(50);
    measure(model, 'hash', 100, 20, SURE_AFTER_RUNS - 1);
    // What the runs so far took is known, for a task that already waited.
    expect(model.estimate('hash', 100)).toMatchObject({
      ms: 20,
      floorMs: 0,
      seenMs: 20,
      sure: false,
    });
    model.record('hash', 20, 100);
    expect(model.estimate('hash', 100)).toMatchObject({ ms: 20, floorMs: 20, sure: true });
  });

  it('is sure after two runs that agree closely, floored with a margin until the runs are enough', () => {
    // Two threads: four runs make a size sure, or two within a quarter of each other.
    const model = new CostModel(50, () => 0, 2);
    measure(model, 'compute', 1000, 300, 1);
    model.record('compute', 330, 1000);
    expect(model.estimate('compute', 1000)).toMatchObject({ floorMs: 200, sure: true });
    measure(model, 'compute', 1000, 300, 2);
    expect(model.estimate('compute', 1000)).toMatchObject({ floorMs: 300, sure: true });
    // Two runs further apart are not enough.
    measure(model, 'hash', 1000, 300, 1);
    model.record('hash', 450, 1000);
    expect(model.estimate('hash', 1000)).toMatchObject({ floorMs: 0, sure: false });
  });

  it('learns each cost class apart: dear runs of one leave another unmeasured', () => {
    const model = new CostModel(50);
    measure(model, costKeyOf('compress', 'gzip-9'), 1000, 400, 4);
    expect(model.estimate(costKeyOf('compress', 'gzip-9'), 1000)).toMatchObject({
      floorMs: 400,
      sure: true,
    });
    expect(model.estimate(costKeyOf('compress', 'gzip-1'), 1000)).toEqual(
      new CostModel(50).estimate('compress', 1000),
    );
    // No class declared: the task's one class.
    expect(costKeyOf('compress')).toBe('compress');
  });

  it("refuses by one client's runs only that client, and by several clients' runs anyone", () => {
    const model = new CostModel(50);
    for (let run = 0; run < 4; run++) model.record('pdf', 900, 1000, 'x');
    expect(model.estimate('pdf', 1000, 'x')).toMatchObject({ floorMs: 900, sure: true });
    expect(model.estimate('pdf', 1000, 'y')).toMatchObject({
      ms: 900,
      floorMs: 0,
      fastestMs: 0,
      seenMs: 0,
      sure: false,
    });
    // Nor does it floor a larger size for another client.
    expect(model.estimate('pdf', 4000, 'y').floorMs).toBe(0);
    for (let run = 0; run < 4; run++) model.record('pdf', 900, 1000, 'z');
    expect(model.estimate('pdf', 1000, 'y')).toMatchObject({ floorMs: 900, sure: true });
  });

  it('is unsure where runs at one size disagree widely, and floors them at the fastest', () => {
    const model = new CostModel(50);
    for (const ms of [900, 900, 900, 900, 25, 25, 25, 25]) model.record('pdf', ms, 1000);
    expect(model.estimate('pdf', 1000)).toMatchObject({ floorMs: 25, fastestMs: 25, sure: false });
    // A larger size is floored by it too, and is not sure between it and another class.
    measure(model, 'pdf', 8000, 2000, 4);
    expect(model.estimate('pdf', 2000)).toMatchObject({ floorMs: 25, sure: false });
    // Runs that agree within the spread allowed are sure.
    const narrow = new CostModel(50);
    for (const ms of [500, 600, 700, 900]) narrow.record('pdf', ms, 1000);
    expect(narrow.estimate('pdf', 1000)).toMatchObject({ sure: true });
  });

  it('takes the median of the runs, so one slow run does not move it', () => {
    const model = new CostModel(50);
    for (const ms of [10, 11, 900, 12, 10]) model.record('hash', ms, 100);
    const estimate = model.estimate('hash', 100);
    expect(estimate.ms).toBe(11);
    expect(estimate.floorMs).toBe(10);
    expect(estimate.highMs).toBe(900);
  });

  it('knows the fastest run at a size, below its floor, and bounds larger sizes by it', () => {
    const model = new CostModel(50);
    for (const ms of [30, 12, 31, 32, 33, 34, 35, 40]) model.record('pdf', ms, 100);
    expect(model.estimate('pdf', 100)).toMatchObject({ floorMs: 30, fastestMs: 12 });
    expect(model.estimate('pdf', 1000).fastestMs).toBe(12);
    // A smaller size was never measured: nothing bounds it.
    expect(model.estimate('pdf', 10).fastestMs).toBe(0);
  });

  it('follows a cost that drifts: only the newest runs count', () => {
    const model = new CostModel(50);
    measure(model, 'hash', 100, 10, 16);
    measure(model, 'hash', 100, 30, 16);
    expect(model.estimate('hash', 100).ms).toBe(30);
  });

  it('keeps its estimates per task', () => {
    const model = new CostModel(50);
    measure(model, 'hash', 1, 10);
    expect(model.estimate('compress').ms).toBe(50);
    expect(model.measured('hash')).toBe(true);
    expect(model.measured('compress')).toBe(false);
  });

  it('raises the floor from a run that was stopped, never lowers it', () => {
    const model = new CostModel(50);
    measure(model, 'compute', 1000, 100);
    model.recordAtLeast('compute', 5, 1000);
    expect(model.estimate('compute', 1000).floorMs).toBe(100);
    // A task that always overruns does not stay cheap: first its median, then its floor rises.
    for (let run = 0; run < 4; run++) model.recordAtLeast('compute', 5000, 1000);
    expect(model.estimate('compute', 1000)).toMatchObject({ ms: 5000, floorMs: 100 });
    for (let run = 0; run < 12; run++) model.recordAtLeast('compute', 5000, 1000);
    expect(model.estimate('compute', 1000).floorMs).toBe(5000);
  });

  it('interpolates between two measured sizes on log-log axes, and is sure there', () => {
    const model = new CostModel(50);
    measure(model, 'compute', 1000, 10);
    measure(model, 'compute', 100_000, 1000);
    const estimate = model.estimate('compute', 10_000);
    expect(estimate.ms).toBeCloseTo(100, 5);
    expect(estimate.sure).toBe(true);
    // Surely at least what the smaller size costs.
    expect(estimate.floorMs).toBe(10);
  });

  it('does not take a fixed cost for a cost per unit: tiny inputs say nothing of large ones', () => {
    const model = new CostModel(50);
    // 2×2 matrices: 0.3 ms, all of it the message and the wake-up.
    measure(model, 'matrix-multiply', 4, 0.3, 5);
    const large = model.estimate('matrix-multiply', 40_000);
    expect(large.sure).toBe(false);
    // Its floor is what the tiny input cost, not 10,000 times that.
    expect(large.floorMs).toBe(0.3);
  });

  it('extrapolates above the measured sizes along a fixed part plus a fitted power of the size', () => {
    const model = new CostModel(50);
    const cost = (size: number) => 1 + 0.001 * size ** 2;
    for (const size of [1, 1000, 4000, 16_000]) measure(model, 'square', size, cost(size));
    const estimate = model.estimate('square', 64_000);
    expect(estimate.sure).toBe(false);
    expect(estimate.ms / cost(64_000)).toBeCloseTo(1, 1);
    expect(estimate.floorMs).toBe(cost(16_000));
  });

  it('estimates below the smallest measured size at that size, and counts a size below one as one', () => {
    const model = new CostModel(50);
    measure(model, 'hash', 1000, 20);
    expect(model.estimate('hash', 10)).toMatchObject({ ms: 20, floorMs: 0, sure: false });
    measure(model, 'tiny', 0, 3);
    expect(model.estimate('tiny', 0.2)).toMatchObject({ ms: 3, floorMs: 3, sure: true });
  });

  describe('properties', () => {
    /** A task whose true cost is `a + b·size^k`; its runs take that times a noise in [1 - e, 1 + e]. */
    const taskShape = fc.record({
      fixedMs: fc.double({ min: 0.05, max: 5, noNaN: true }),
      perUnit: fc.double({ min: 1e-7, max: 1e-2, noNaN: true }),
      exponent: fc.double({ min: 0.5, max: 2.5, noNaN: true }),
      noise: fc.double({ min: 0, max: 0.3, noNaN: true }),
    });
    const size = fc.integer({ min: 1, max: 5_000_000 });
    /** Where each run lands in the noise band: -1 its bottom, 1 its top. */
    const jitter = fc.double({ min: -1, max: 1, noNaN: true });
    const costOf =
      (shape: { fixedMs: number; perUnit: number; exponent: number }) => (units: number) =>
        shape.fixedMs + shape.perUnit * units ** shape.exponent;

    it('never puts the floor above what a run of that size can take, whatever sizes came before', () => {
      fc.assert(
        fc.property(
          taskShape,
          fc.array(fc.tuple(size, jitter), { minLength: 1, maxLength: 200 }),
          size,
          (shape, runs, asked) => {
            const cost = costOf(shape);
            const model = new CostModel(50);
            for (const [units, at] of runs)
              model.record('task', cost(units) * (1 + shape.noise * at), units);
            expect(model.estimate('task', asked).floorMs).toBeLessThanOrEqual(
              cost(asked) * (1 + shape.noise) * (1 + 1e-9),
            );
          },
        ),
        { numRuns: 300 },
      );
    });

    it('is sure, within the noise, of a size measured enough', () => {
      fc.assert(
        fc.property(
          taskShape,
          size,
          fc.array(jitter, { minLength: 16, maxLength: 16 }),
          (shape, units, runs) => {
            const cost = costOf(shape)(units);
            const model = new CostModel(50);
            for (const at of runs) model.record('task', cost * (1 + shape.noise * at), units);
            const estimate = model.estimate('task', units);
            expect(estimate.sure).toBe(true);
            expect(estimate.ms).toBeGreaterThanOrEqual(cost * (1 - shape.noise) * (1 - 1e-9));
            expect(estimate.ms).toBeLessThanOrEqual(cost * (1 + shape.noise) * (1 + 1e-9));
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
