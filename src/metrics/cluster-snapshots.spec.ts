import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { aggregateSnapshots, lastingPart } from './cluster-snapshots';

/** One process's registry, as the primary receives it. */
async function processSnapshot(pid: string, tasks: number, queue: number) {
  const registry = new Registry();
  new Counter({ name: 'tasks_total', help: 'h', labelNames: ['task'], registers: [registry] }).inc(
    { task: 'a' },
    tasks,
  );
  new Histogram({ name: 'run_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(
    0.5,
  );
  new Gauge({ name: 'queue_size', help: 'h', registers: [registry] }).set(queue);
  new Gauge({
    name: 'heap_bytes',
    help: 'h',
    labelNames: ['pid'],
    aggregator: 'omit',
    registers: [registry],
  }).set({ pid }, Number(pid) * 10);
  return registry.getMetricsAsJSON();
}

describe(aggregateSnapshots.name, () => {
  it('sums counters, histograms and gauges, and keeps per-process series apart', async () => {
    const text = await aggregateSnapshots([
      await processSnapshot('1', 3, 2),
      await processSnapshot('2', 4, 5),
    ]).metrics();
    expect(text).toContain('tasks_total{task="a"} 7');
    expect(text).toContain('run_seconds_count 2');
    expect(text).toContain('run_seconds_bucket{le="1"} 2');
    expect(text).toContain('queue_size 7');
    // `omit` would drop the metric; per process, each series is kept as it is.
    expect(text).toContain('heap_bytes{pid="1"} 10');
    expect(text).toContain('heap_bytes{pid="2"} 20');
  });
});

describe(lastingPart.name, () => {
  it('keeps only what stays true once the process is gone: counters and histograms', async () => {
    const names = lastingPart(await processSnapshot('1', 3, 2)).map((metric) => metric.name);
    expect(names).toEqual(['tasks_total', 'run_seconds']);
  });

  it('keeps the totals of a process that left, so the sum never goes backwards', async () => {
    const gone = lastingPart(await processSnapshot('1', 3, 2));
    const text = await aggregateSnapshots([await processSnapshot('2', 4, 5), gone]).metrics();
    expect(text).toContain('tasks_total{task="a"} 7');
    expect(text).toContain('queue_size 5');
    expect(text).not.toContain('pid="1"');
  });
});
