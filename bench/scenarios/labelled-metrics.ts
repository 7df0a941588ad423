/**
 * The hand-written metric types (src/metrics/labelled-*.ts) beside the
 * client's own, for the updates corepool makes on every request or task: one
 * histogram observation and one counter increment with two labels, in
 * nanoseconds per update, in this process. Rounds alternate the two, so that
 * they share the machine's load alike; the note quotes the range and the ratio.
 *
 *   npm run bench:micro -- labelled-metrics        # ROUNDS=5, UPDATES=1000000 by default
 */
import { performance } from 'node:perf_hooks';
import { Counter, Histogram, Registry } from 'prom-client';
import { LabelledCounter } from '../../src/metrics/labelled-counter';
import { LabelledHistogram } from '../../src/metrics/labelled-histogram';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const UPDATES = Number(process.env.UPDATES ?? 1_000_000);
const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];
const TASKS = ['hash', 'compress', 'factorial', 'compute'];

export function main(): void {
  /** Nanoseconds per call of `update(i)`. */
  function timed(update: (i: number) => void): number {
    const started = performance.now();
    for (let i = 0; i < UPDATES; i++) update(i);
    return ((performance.now() - started) * 1e6) / UPDATES;
  }

  const registry = new Registry();
  const clientHistogram = new Histogram({
    name: 'client_histogram',
    help: 'h',
    labelNames: ['task', 'outcome'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const clientCounter = new Counter({
    name: 'client_counter',
    help: 'c',
    labelNames: ['task', 'outcome'],
    registers: [registry],
  });
  const ownHistogram = new LabelledHistogram('own_histogram', 'h', ['task', 'outcome'], BUCKETS);
  const ownCounter = new LabelledCounter('own_counter', 'c', ['task', 'outcome']);
  // As the services keep them: the series found once, updated on every task.
  const histogramSeries = TASKS.map((task) => ownHistogram.series({ task, outcome: 'success' }));
  const counterSeries = TASKS.map((task) => ownCounter.series({ task, outcome: 'success' }));

  const results: Record<string, number[]> = {
    'client Histogram.observe': [],
    'LabelledHistogram series.observe': [],
    'client Counter.inc': [],
    'LabelledCounter series.inc': [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    results['client Histogram.observe']!.push(
      timed((i) => clientHistogram.observe({ task: TASKS[i & 3]!, outcome: 'success' }, i * 1e-6)),
    );
    results['LabelledHistogram series.observe']!.push(
      timed((i) => histogramSeries[i & 3]!.observe(i * 1e-6)),
    );
    results['client Counter.inc']!.push(
      timed((i) => clientCounter.inc({ task: TASKS[i & 3]!, outcome: 'success' })),
    );
    results['LabelledCounter series.inc']!.push(timed((i) => counterSeries[i & 3]!.inc()));
  }

  const range = (values: number[]) =>
    `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  console.log(`Node.js ${process.versions.node}, ${ROUNDS} rounds of ${UPDATES} updates`);
  for (const [name, values] of Object.entries(results)) {
    console.log(`${name}: ${median(values).toFixed(0)} ns median (${range(values)})`);
  }
  const ratio = (client: string, own: string) =>
    (median(results[client]!) / median(results[own]!)).toFixed(1);
  console.log(
    `client ÷ own: histogram ${ratio('client Histogram.observe', 'LabelledHistogram series.observe')} ×, ` +
      `counter ${ratio('client Counter.inc', 'LabelledCounter series.inc')} ×`,
  );
}
