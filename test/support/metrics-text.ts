import { AggregatorRegistry, type Registry } from 'prom-client';

/** One sample of Prometheus text format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses Prometheus text exposition (what `/metrics` answers) into samples. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`. */
export function sumOf(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** Distinct values of one label across a metric's samples. */
export function labelValues(samples: readonly Sample[], name: string, label: string): string[] {
  return [
    ...new Set(
      samples
        .filter((sample) => sample.name === name && sample.labels[label] !== undefined)
        .map((sample) => sample.labels[label]!),
    ),
  ].sort();
}

/** What the cluster's primary exposes for these per-process registries (prom-client's aggregation). */
export async function aggregatedText(registries: readonly Registry[]): Promise<string> {
  const metrics = await Promise.all(registries.map((registry) => registry.getMetricsAsJSON()));
  return AggregatorRegistry.aggregate(metrics).metrics();
}
