import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { aggregateSnapshots, lastingPart, renderAlone } from './cluster-snapshots';
import { LabelledHistogram } from './labelled-histogram';

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

/** A process's latency histogram, with a traced observation per bucket given. */
async function tracedSnapshot(traced: ReadonlyArray<[number, string, number]>) {
  const registry = new Registry();
  const histogram = new LabelledHistogram('latency_seconds', 'h', ['route'], [0.1, 1]);
  registry.registerMetric(histogram.asMetric());
  const series = histogram.series({ route: '/a' });
  series.observe(0.05);
  for (const [seconds, traceId, at] of traced) {
    series.observeTraced(seconds, traceId, '00f067aa0ba902b7');
    // The observation's time, set by the test: the newest of the cluster wins.
    const bucket = seconds <= 0.1 ? 0 : seconds <= 1 ? 1 : 2;
    series.exemplars![bucket] = { ...series.exemplars![bucket]!, timestamp: at };
  }
  new Counter({ name: 'tasks_total', help: 'h', registers: [registry] }).inc(2);
  return registry.getMetricsAsJSON();
}

const exemplarLines = (text: string) => text.split('\n').filter((line) => line.includes(' # {'));

describe('exemplars through the aggregation', () => {
  const older = 'a'.repeat(32);
  const newer = 'b'.repeat(32);
  const slow = 'c'.repeat(32);

  it("keeps each bucket's newest exemplar among the processes, in OpenMetrics", async () => {
    const text = await aggregateSnapshots(
      [
        await tracedSnapshot([
          [0.02, older, 1_000],
          [5, slow, 1_500],
        ]),
        await tracedSnapshot([[0.03, newer, 2_000]]),
        await tracedSnapshot([]),
      ],
      'openmetrics',
    ).metrics();
    expect(exemplarLines(text)).toEqual([
      `latency_seconds_bucket{le="0.1",route="/a"} 5 # {trace_id="${newer}",span_id="00f067aa0ba902b7"} 0.03 2000`,
      `latency_seconds_bucket{le="+Inf",route="/a"} 6 # {trace_id="${slow}",span_id="00f067aa0ba902b7"} 5 1500`,
    ]);
    // OpenMetrics: a counter's family has no `_total`, its sample has; the text ends with EOF.
    expect(text).toContain('# TYPE tasks counter\ntasks_total 6');
    expect(text.endsWith('# EOF\n')).toBe(true);
  });

  it("leaves them out of Prometheus's text format, and keeps them when retired snapshots are merged", async () => {
    const snapshots = [await tracedSnapshot([[0.02, older, 1_000]])];
    const text = await aggregateSnapshots(snapshots).metrics();
    expect(text).not.toContain('# {');
    expect(text).toContain('tasks_total 2');
    const compacted = await aggregateSnapshots(snapshots).getMetricsAsJSON();
    const again = await aggregateSnapshots([compacted], 'openmetrics').metrics();
    expect(exemplarLines(again)).toHaveLength(1);
  });
});

describe(renderAlone.name, () => {
  it('renders one process in OpenMetrics, keeping metrics the aggregation would omit', async () => {
    const registry = new Registry();
    new Gauge({ name: 'start_seconds', help: 'h', aggregator: 'omit', registers: [registry] }).set(
      5,
    );
    const text = await renderAlone(await registry.getMetricsAsJSON(), 'openmetrics');
    expect(text).toContain('start_seconds 5');
  });
});
