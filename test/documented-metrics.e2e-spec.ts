import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(180_000);

const OBSERVABILITY_DOC = resolve(__dirname, '..', 'docs', 'observability.md');

/** corepool's own metrics; prom-client's defaults (`process_*`, `nodejs_*`) are documented as a group. */
const OWN_METRIC = /^(?:http|compute)_[a-z_]+$/;

/** Name → type of every own metric the `## Metrics` section documents, in its table or its text. */
function documentedMetrics(markdown: string): Map<string, string | undefined> {
  const section = markdown.split(/^## Metrics$/m)[1]?.split(/^## /m)[0] ?? '';
  const metrics = new Map<string, string | undefined>();
  for (const line of section.split('\n')) {
    const cells = line.startsWith('|') ? line.split('|').map((cell) => cell.trim()) : [];
    const type = cells[2];
    const names = [...(cells[1] ?? line).matchAll(/`([a-z_]+)(?:\{[^`]*\})?`/g)]
      .map((match) => match[1] as string)
      .filter((name) => OWN_METRIC.test(name));
    for (const name of names) metrics.set(name, metrics.get(name) ?? type);
  }
  return metrics;
}

/** Name → type from the `# TYPE` lines of a Prometheus text exposition. */
function exposedMetrics(text: string): Map<string, string> {
  const metrics = new Map<string, string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    if (OWN_METRIC.test(name)) metrics.set(name, type);
  }
  return metrics;
}

describe('docs/observability.md metrics (CLUSTER_PROCESSES=2, real processes)', () => {
  let service: ServiceProcess;
  let exposed: Map<string, string>;
  const documented = documentedMetrics(readFileSync(OBSERVABILITY_DOC, 'utf8'));

  beforeAll(async () => {
    // Cluster mode: the primary adds its own metric (collection failures).
    service = await startService(
      { CLUSTER_PROCESSES: '2', POOL_THREADS: '1' },
      { readyPath: '/health/ready', timeoutMs: 120_000 },
    );
    // One task and one error, so every labelled series family has been touched.
    await fetch(`${service.url}/api/tasks/factorial`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n": 10}',
    });
    await fetch(`${service.url}/api/no-such-route`);
    const response = await fetch(`${service.url}/metrics`);
    expect(response.status).toBe(200);
    exposed = exposedMetrics(await response.text());
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('documents every metric the service exposes, with its type', () => {
    const missing = [...exposed.keys()].filter((name) => !documented.has(name));
    expect(missing).toEqual([]);
    const wrongType = [...exposed]
      .filter(([name, type]) => {
        const documentedType = documented.get(name);
        return documentedType !== undefined && documentedType !== type;
      })
      .map(([name, type]) => `${name}: exposed as ${type}, documented as ${documented.get(name)}`);
    expect(wrongType).toEqual([]);
  });

  it('documents no metric the service does not expose', () => {
    expect([...documented.keys()].filter((name) => !exposed.has(name))).toEqual([]);
  });
});
