import { Counter, Registry } from 'prom-client';
import { aggregatedText } from '../../test/support/metrics-text';
import { LabelledCounter } from './labelled-counter';

const NAME = 'compute_tasks_total';
const HELP = 'Tasks settled';
const INCREMENTS: ReadonlyArray<[string, string, number]> = [
  ['hash', 'success', 1],
  ['hash', 'success', 1],
  ['hash', 'failed', 1],
  ['compress', 'timeout', 3],
];

/** The same increments through prom-client's Counter and through LabelledCounter. */
function both(increments: ReadonlyArray<[string, string, number]>) {
  const reference = new Registry();
  const counter = new Counter({
    name: NAME,
    help: HELP,
    labelNames: ['task', 'outcome'],
    registers: [reference],
  });
  const ours = new Registry();
  const fast = new LabelledCounter(NAME, HELP, ['task', 'outcome']);
  ours.registerMetric(fast.asMetric());
  for (const [task, outcome, by] of increments) {
    counter.inc({ task, outcome }, by);
    fast.series({ task, outcome }).inc(by);
  }
  return { reference, ours, fast };
}

describe('LabelledCounter', () => {
  it('exposes exactly what prom-client’s Counter exposes for the same increments', async () => {
    const { reference, ours } = both(INCREMENTS);
    expect(await ours.metrics()).toBe(await reference.metrics());
  });

  it('sums across processes like a prom-client counter (the cluster aggregation)', async () => {
    const first = both(INCREMENTS.slice(0, 2));
    const second = both(INCREMENTS.slice(1));
    expect(await aggregatedText([first.ours, second.ours])).toBe(
      await aggregatedText([first.reference, second.reference]),
    );
  });

  it('gives the same series for the same labels, in any order, and a series exists at 0', async () => {
    const fast = new LabelledCounter(NAME, HELP, ['task', 'outcome']);
    const registry = new Registry();
    registry.registerMetric(fast.asMetric());
    expect(fast.series({ task: 'hash', outcome: 'success' })).toBe(
      fast.series({ outcome: 'success', task: 'hash' }),
    );
    expect(await registry.metrics()).toContain(`${NAME}{task="hash",outcome="success"} 0`);
  });

  it('zeroes every series on reset', async () => {
    const { ours, fast } = both(INCREMENTS);
    fast.reset();
    expect(await ours.metrics()).toContain(`${NAME}{task="hash",outcome="success"} 0`);
  });
});
