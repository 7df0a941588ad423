import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';
import { waitUntil } from './support/poll';
import { freePort, startService, type ServiceProcess } from './support/service-process';
import { parseMetrics, sumOf } from './support/metrics-text';
import { withBoolComparisons } from './support/promql';

// A real Prometheus (Debian's `prometheus` package; .ci/run installs it)
// scrapes a real corepool cluster. Without the binaries this test fails: it
// never skips.
jest.setTimeout(180_000);

const DEPLOY = resolve(__dirname, '../deploy');
const RULES = join(DEPLOY, 'prometheus/rules.yml');
const RULES_TEST = join(DEPLOY, 'prometheus/rules.test.yml');
const DASHBOARD = join(DEPLOY, 'grafana/corepool-dashboard.json');
const COMPOSE_PROMETHEUS = join(DEPLOY, 'compose/prometheus.yml');
const COMPOSE = join(DEPLOY, 'compose/compose.yaml');
const COMPOSE_DATASOURCES = join(DEPLOY, 'compose/grafana/provisioning/datasources/prometheus.yml');
/** The dashboard's latency histograms: their panels show exemplars, links to traces. */
const TRACED_HISTOGRAMS = [
  'http_request_duration_seconds_bucket',
  'compute_task_wait_seconds_bucket',
  'compute_task_run_seconds_bucket',
];
const OUTCOMES = ['success', 'failed', 'timeout', 'rejected', 'cancelled', 'crashed'];
/** What the dashboard's variables stand for while the test evaluates its queries. */
const DASHBOARD_VARIABLES: Record<string, string> = {
  __rate_interval: '5m',
  __interval: '15s',
  __range: '5m',
  job: 'corepool',
  instance: '.*',
};

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function promtool(args: string[], input?: string) {
  const result = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 60_000 });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

interface Panel {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: Array<{ expr: string; exemplar?: boolean; datasource?: { uid?: string } }>;
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: unknown }> };
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

/** Every query in the dashboard: panel targets, and variable queries as PromQL. */
function dashboardQueries(): Array<{ where: string; expr: string }> {
  const substitute = (expr: string) =>
    expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => DASHBOARD_VARIABLES[name] ?? whole);
  const queries = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel "${panel.title}"`,
      expr: substitute(target.expr),
    })),
  );
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const query = (variable.query as { query: string }).query;
    // Grafana's label_values(metric, label) is `group by (label) (metric)` in PromQL.
    const match = /^label_values\((.*),\s*(\w+)\)$/.exec(query);
    if (match === null) throw new Error(`unexpected variable query ${query}`);
    queries.push({
      where: `variable ${variable.name}`,
      expr: substitute(`group by (${match[2]}) (${match[1]})`),
    });
  }
  return queries;
}

describe('Metrics against a real Prometheus', () => {
  let service: ServiceProcess;
  let receiver: OtlpReceiver;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let workDir: string;

  async function query(expr: string) {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
  }

  beforeAll(async () => {
    for (const tool of ['prometheus', 'promtool']) {
      const found = spawnSync(tool, ['--version'], { encoding: 'utf8' });
      if (found.error !== undefined || found.status !== 0) {
        throw new Error(`${tool} is not installed (apt-get install prometheus; .ci/run does)`);
      }
    }
    // Tracing on, every request sampled: Prometheus scrapes OpenMetrics with exemplars.
    receiver = await startOtlpReceiver();
    service = await startService({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      POOL_MAX_QUEUE: '1',
      TASK_TIMEOUT_MS: '1500',
      // The traffic loop reads the outcomes it has caused so far from each scrape.
      METRICS_CACHE_MS: '0',
    });
    workDir = mkdtempSync(join(tmpdir(), 'corepool-prometheus-'));
    const config = join(workDir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES)}]`,
        'scrape_configs:',
        '  - job_name: corepool',
        `    static_configs: [{ targets: ["127.0.0.1:${service.port}"] }]`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(workDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
        '--enable-feature=exemplar-storage',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    prometheus.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${prometheusUrl}/-/ready`)).status === 200) break;
      } catch {
        // not listening yet
      }
      if (i === 300 || prometheus.exitCode !== null) {
        throw new Error(`Prometheus did not become ready:\n${stderr}`);
      }
      await sleep(100);
    }
  });

  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await once(prometheus, 'exit');
    }
    await service?.stop();
    await receiver?.close();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it('passes promtool check metrics on the /metrics output', async () => {
    // promtool reads Prometheus's text format; Prometheus itself scrapes OpenMetrics below.
    const text = await (
      await fetch(`${service.url}/metrics`, { headers: { accept: 'text/plain' } })
    ).text();
    expect(text).toContain('compute_tasks_total');
    const result = promtool(['check', 'metrics'], text);
    expect(result).toEqual({ status: 0, output: '' });
  });

  it('passes promtool check rules and promtool test rules', () => {
    const check = promtool(['check', 'rules', RULES]);
    expect(check.output).toContain('SUCCESS: 8 rules found');
    expect(check.status).toBe(0);
    const test = promtool(['test', 'rules', RULES_TEST]);
    expect(test.output).toContain('SUCCESS');
    expect(test.status).toBe(0);
  });

  it("passes promtool check config on the compose setup's Prometheus config", () => {
    // Laid out as in the container: the config and rules.yml side by side.
    const dir = mkdtempSync(join(workDir, 'compose-'));
    copyFileSync(COMPOSE_PROMETHEUS, join(dir, 'prometheus.yml'));
    copyFileSync(RULES, join(dir, 'rules.yml'));
    // The scrape's API key, as deploy/compose/make-keys.sh writes it beside the config.
    writeFileSync(join(dir, 'prometheus-api-key'), 'a-key-with-the-admin-scope');
    const check = promtool(['check', 'config', join(dir, 'prometheus.yml')]);
    expect(check.output).toContain('SUCCESS');
    expect(check.status).toBe(0);
  });

  it('has a dashboard that takes its data source from a variable', () => {
    const variable = dashboard.templating.list.find((entry) => entry.name === 'DS_PROMETHEUS');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const panel of dashboard.panels.filter((entry) => entry.type !== 'row')) {
      expect({ panel: panel.title, uid: panel.datasource?.uid }).toEqual({
        panel: panel.title,
        uid: '${DS_PROMETHEUS}',
      });
      for (const target of panel.targets ?? []) {
        expect(target.datasource?.uid).toBe('${DS_PROMETHEUS}');
      }
    }
  });

  it('links the latency panels to traces: exemplars on, and a trace data source to open them in', () => {
    const latencyTargets = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? [])
        .filter((target) => TRACED_HISTOGRAMS.some((name) => target.expr.includes(name)))
        .map((target) => ({ panel: panel.title, expr: target.expr, exemplar: target.exemplar })),
    );
    expect(latencyTargets.length).toBeGreaterThanOrEqual(TRACED_HISTOGRAMS.length);
    for (const target of latencyTargets) expect(target).toMatchObject({ exemplar: true });

    // Grafana's compose provisioning: the Prometheus data source sends `trace_id` to Jaeger,
    // which the compose file runs, and its Prometheus keeps exemplars.
    const { datasources } = parse(readFileSync(COMPOSE_DATASOURCES, 'utf8')) as {
      datasources: Array<{
        uid: string;
        type: string;
        jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string; datasourceUid: string }> };
      }>;
    };
    const prometheusSource = datasources.find((source) => source.type === 'prometheus');
    const destinations = prometheusSource?.jsonData?.exemplarTraceIdDestinations ?? [];
    expect(destinations.map((destination) => destination.name)).toEqual(['trace_id']);
    const traces = datasources.find((source) => source.uid === destinations[0]!.datasourceUid);
    expect(traces?.type).toBe('jaeger');
    const compose = parse(readFileSync(COMPOSE, 'utf8')) as {
      services: Record<string, { command?: string[] }>;
    };
    expect(compose.services.jaeger).toBeDefined();
    expect(compose.services.prometheus?.command).toContain('--enable-feature=exemplar-storage');
  });

  it("stores the cluster's exemplars, each naming a trace the exporter received", async () => {
    const traceIds = Array.from({ length: 4 }, () => crypto.randomUUID().replaceAll('-', ''));
    for (const traceId of traceIds) {
      const response = await fetch(`${service.url}/api/tasks/thread-id`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          connection: 'close',
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        },
        body: '{}',
      });
      expect(response.status).toBe(200);
    }
    const exemplarTraces = async (metric: string) => {
      const now = Date.now() / 1000;
      const url = `${prometheusUrl}/api/v1/query_exemplars?query=${encodeURIComponent(
        `${metric}{job="corepool"}`,
      )}&start=${now - 300}&end=${now + 60}`;
      const answer = (await (await fetch(url)).json()) as {
        data?: Array<{ exemplars: Array<{ labels: Record<string, string> }> }>;
      };
      return (answer.data ?? []).flatMap((series) =>
        series.exemplars.map((exemplar) => exemplar.labels.trace_id),
      );
    };
    for (const metric of [
      'http_request_duration_seconds_bucket',
      'compute_task_run_seconds_bucket',
    ]) {
      let found: Array<string | undefined> = [];
      for (let i = 0; i < 150; i++) {
        found = await exemplarTraces(metric);
        if (found.some((traceId) => traceIds.includes(traceId!))) break;
        await sleep(200);
      }
      expect({ metric, linked: found.some((traceId) => traceIds.includes(traceId!)) }).toEqual({
        metric,
        linked: true,
      });
      for (const traceId of found.filter((id) => traceIds.includes(id!))) {
        await waitUntil(`the exporter to receive trace ${traceId}`, () =>
          receiver.spans.some((span) => span.traceId === traceId),
        );
      }
    }
  });

  it('answers every dashboard and rule query with data, after traffic of every outcome', async () => {
    // Counts before the first scrape would show as no increase at all.
    await waitUntil(
      'the first scrape',
      async () => (await query('up{job="corepool"} == 1')).data?.result.length === 1,
      { intervalMs: 200 },
    );
    await generateTrafficOfEveryOutcome(service);
    await generateJobTraffic(service);

    // Prometheus has scraped the counts once every outcome shows in its answer.
    let seen: Record<string, number> = {};
    await waitUntil(
      'Prometheus to have scraped every outcome',
      async () => {
        const answer = await query('sum by (outcome) (compute_tasks_total{job="corepool"})');
        seen = Object.fromEntries(
          (answer.data?.result ?? []).map((entry) => [
            entry.metric.outcome,
            Number(entry.value[1]),
          ]),
        );
        return OUTCOMES.every((outcome) => (seen[outcome] ?? 0) > 0);
      },
      { intervalMs: 200 },
    ).catch(() => undefined);
    expect(OUTCOMES.filter((outcome) => !((seen[outcome] ?? 0) > 0))).toEqual([]);

    // The rules as Prometheus loaded them from rules.yml, once each has been evaluated.
    let rules: Array<{ name: string; query: string; health: string; lastError?: string }> = [];
    await waitUntil('every rule evaluated', async () => {
      const answer = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ rules: typeof rules }> };
      };
      rules = answer.data.groups.flatMap((group) => group.rules);
      return rules.length > 0 && rules.every((rule) => rule.health !== 'unknown');
    });
    expect(rules.map((rule) => rule.name).sort()).toEqual(
      [...readFileSync(RULES, 'utf8').matchAll(/- alert: (\w+)/g)].map((match) => match[1]).sort(),
    );
    expect(rules.filter((rule) => rule.health !== 'ok')).toEqual([]);

    const ruleQueries = rules.map((rule) => ({
      where: `rule ${rule.name}`,
      // Quiet alerts return nothing; compared with `bool`, every series they look at answers.
      expr: withBoolComparisons(rule.query),
    }));
    const queries = [...dashboardQueries(), ...ruleQueries];
    const unanswered = async () => {
      const failures: string[] = [];
      for (const { where, expr } of queries) {
        const answer = await query(expr);
        if (answer.status !== 'success') failures.push(`${where}: ${answer.error} in ${expr}`);
        else if ((answer.data?.result.length ?? 0) === 0)
          failures.push(`${where}: no data: ${expr}`);
      }
      return failures;
    };
    // A rate() has data from its second sample after the traffic on: asked until every query
    // answers (scrapes are 1 s apart), and what still fails after that is the failure.
    let failures: string[] = [];
    await waitUntil(
      'every dashboard and rule query to answer with data',
      async () => (failures = await unanswered()).length === 0,
      { timeoutMs: 30_000, intervalMs: 500 },
    ).catch(() => undefined);
    expect(failures).toEqual([]);
  });
});

/**
 * Sends requests until the service itself has counted every outcome: tasks
 * that succeed, throw, crash their thread, run past the deadline, find the
 * queue full, and whose client goes away. Bounded in rounds.
 */
async function generateTrafficOfEveryOutcome(service: ServiceProcess): Promise<void> {
  const post = (task: string, body: unknown = {}) =>
    fetch(`${service.url}/api/tasks/${task}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify(body),
    }).then((response) => response.status);
  const outcomes = async () => {
    const samples = parseMetrics(await (await fetch(`${service.url}/metrics`)).text());
    return new Set(
      OUTCOMES.filter((outcome) => sumOf(samples, 'compute_tasks_total', { outcome }) > 0),
    );
  };
  for (let round = 0; round < 6; round++) {
    const done = await outcomes();
    if (done.size === OUTCOMES.length) return;
    const work: Array<Promise<unknown>> = [];
    if (!done.has('success')) for (let i = 0; i < 6; i++) work.push(post('thread-id'));
    if (!done.has('failed')) work.push(post('throw'));
    if (!done.has('crashed')) work.push(post('crash'));
    if (!done.has('timeout')) work.push(post('spin'));
    await Promise.all(work);
    // One thread and one queue slot per process: most of these are turned away.
    if (!done.has('rejected')) {
      await Promise.all(Array.from({ length: 8 }, () => post('sleep', { ms: 300 })));
    }
    if (!done.has('cancelled')) await abandonRequest(service, 'sleep', { ms: 1000 });
  }
  // The last round's outcomes are counted as its tasks end (a cancelled one once the server saw the close).
  await waitUntil(
    'every outcome counted',
    async () => (await outcomes()).size === OUTCOMES.length,
    { timeoutMs: 10_000 },
  ).catch(async () => {
    throw new Error(`not every outcome happened: ${[...(await outcomes())].join(', ')}`);
  });
}

/**
 * Runs asynchronous jobs to their end, so the dashboard's job panels have data.
 * The in-process store is per process, so a poll answered by the other
 * cluster process says 404; a later one reaches the right process.
 */
async function generateJobTraffic(service: ServiceProcess): Promise<void> {
  const ids = await Promise.all(
    [1, 2, 3].map(async () => {
      const response = await fetch(`${service.url}/api/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'factorial', input: { n: 50 } }),
      });
      expect(response.status).toBe(202);
      return ((await response.json()) as { id: string }).id;
    }),
  );
  for (const id of ids) {
    for (let poll = 0; ; poll++) {
      // A new connection each time (fetch would reuse one): the cluster spreads connections.
      const job = (await getOnNewConnection(`${service.url}/api/jobs/${id}`)) as {
        status?: string;
      };
      if (job.status === 'succeeded') break;
      if (poll > 200) throw new Error(`job ${id} still ${job.status}`);
      await sleep(50);
    }
  }
}

function getOnNewConnection(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(JSON.parse(text)));
    }).on('error', reject);
  });
}

/** Sends a task and closes the connection before the answer, as a client that gives up. */
async function abandonRequest(service: ServiceProcess, task: string, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  const req = request(`${service.url}/api/tasks/${task}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
  });
  req.on('error', () => undefined);
  req.end(payload);
  // Gone once its task runs (the traffic before it has ended): the close cancels a running task.
  const busy = async () =>
    sumOf(
      parseMetrics(await (await fetch(`${service.url}/metrics`)).text()),
      'compute_pool_utilization',
    ) > 0;
  await waitUntil('the abandoned task to run', busy, { timeoutMs: 10_000 }).catch(() => undefined);
  req.destroy();
}
