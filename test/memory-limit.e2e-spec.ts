import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../src/config/load-config';
import { MEMORY_PEAK_SHARE } from '../src/config/memory-limits';
import { sumRssKiB } from './support/process-tree';
import { freePort, startService, type ServiceProcess } from './support/service-process';
import { wideRecords } from './support/wide-records';

jest.setTimeout(300_000);

const MiB = 1024 * 1024;

/** The Deployment's container: its environment and its memory limit, in bytes. */
function manifest(): { env: Record<string, string>; limitBytes: number } {
  const file = resolve(__dirname, '../deploy/kubernetes/deployment.yaml');
  const [deployment] = parseAllDocuments(readFileSync(file, 'utf8')).map(
    (document) => document.toJS() as Record<string, any>,
  );
  const container = deployment!.spec.template.spec.containers[0];
  const env = Object.fromEntries(
    (container.env as Array<{ name: string; value: string }>).map((v) => [v.name, String(v.value)]),
  );
  const match = /^(\d+)(Mi|Gi)$/.exec(container.resources.limits.memory as string);
  if (match === null)
    throw new Error(`unsupported memory limit ${container.resources.limits.memory}`);
  return { env, limitBytes: Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) * MiB };
}

/** A `json-stats` upload on a connection of its own: its status and problem code. */
function jsonStats(url: string, body: Buffer): Promise<{ status: number; code?: string }> {
  return new Promise((done, fail) => {
    const req = request(
      `${url}/api/tasks/json-stats`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          done(
            status === 200
              ? { status }
              : { status, code: (JSON.parse(text) as { code: string }).code },
          );
        });
      },
    );
    // A refusal may come before the whole body is sent; the answer is what counts.
    req.on('error', fail);
    req.end(body);
  });
}

/**
 * The Kubernetes manifest's settings in a real process that is told the
 * container's limit (`MEMORY_LIMIT_BYTES`, as the cgroup would): the worst mix
 * it admits stays within MEMORY_PEAK_SHARE of the limit, measured as the RSS
 * of its process tree, and what does not fit is refused at once with 503
 * (docs/adr/0044-memory-defaults-from-the-container.md).
 */
describe('memory under the container limit (the manifest, a real process)', () => {
  let service: ServiceProcess | undefined;
  afterAll(() => service?.stop());

  it('keeps the worst admitted mix of wide 64 MiB json-stats under 85 % of the limit, and refuses the rest with 503 POOL_SATURATED', async () => {
    const { env: deployed, limitBytes } = manifest();
    const env = {
      ...deployed,
      MEMORY_LIMIT_BYTES: String(limitBytes),
      // The test's own: no key file, no fixed admin port, fewer lines.
      AUTH_MODE: 'none',
      ADMIN_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    delete (env as Record<string, string | undefined>).AUTH_API_KEYS_FILE;
    const config = loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: process.cwd() });
    const body = wideRecords(config.http.binaryBodyLimitBytes);
    // More bodies than the budget holds: the excess must be refused, not run.
    const count = Math.floor(config.http.bodyMemoryBudgetBytes / body.length) + 1;

    service = await startService(env);
    const pid = service.pid;
    let peakKiB = sumRssKiB(pid);
    const sampler = setInterval(() => (peakKiB = Math.max(peakKiB, sumRssKiB(pid))), 10);
    // Beside them, a task that allocates without bound takes the other thread to its budget.
    const runaway = fetch(`${service.url}/api/tasks/oom`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).then(async (response) => ({
      status: response.status,
      code: ((await response.json()) as { code: string }).code,
    }));
    const answers = await Promise.all(
      Array.from({ length: count }, () => jsonStats(service!.url, body)),
    );
    const ranAway = await runaway;
    clearInterval(sampler);
    peakKiB = Math.max(peakKiB, sumRssKiB(pid));

    const peakMiB = peakKiB / 1024;
    console.log(
      `limit ${limitBytes / MiB} MiB, body budget ${config.http.bodyMemoryBudgetBytes / MiB} MiB, ` +
        `threads ${config.pool.threads} × ${config.pool.maxMemoryMb} MB (heap ${config.pool.maxOldGenerationMb} MB): ` +
        `oom → ${ranAway.code}, ${count} × ${(body.length / MiB).toFixed(1)} MiB → ${answers.map((a) => a.code ?? a.status).join(', ')}, peak ${peakMiB.toFixed(0)} MiB`,
    );
    expect(ranAway).toEqual({ status: 500, code: 'WORKER_OUT_OF_MEMORY' });
    // What was admitted ended within its thread's budget: its answer, or a coded stop (the
    // budget's; the deadline's on a slow machine), never a process the kernel killed.
    const admitted = answers.filter((answer) => answer.status !== 503);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    for (const answer of admitted) {
      expect([
        { status: 200 },
        { status: 500, code: 'WORKER_OUT_OF_MEMORY' },
        { status: 504, code: 'TASK_TIMEOUT' },
      ]).toContainEqual(answer);
    }
    expect(answers.filter((answer) => answer.status === 503)).toContainEqual({
      status: 503,
      code: 'POOL_SATURATED',
    });
    expect(peakKiB * 1024).toBeLessThanOrEqual(MEMORY_PEAK_SHARE * limitBytes);
  });
});
