import { launchProcess, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(90_000);

const WARNING = /CLUSTER_WORKERS is deprecated: it is now CLUSTER_PROCESSES/;

/** Pids of the cluster processes that reported ready (from the primary's log). */
const readyCount = (service: ServiceProcess) =>
  service.lines.filter((line) => /"msg":"process \d+ ready"/.test(line)).length;

describe('CLUSTER_WORKERS, the old name of CLUSTER_PROCESSES (real processes)', () => {
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('still sets the processes of a cluster, and the primary alone warns, once', async () => {
    const cluster = await startService(
      { CLUSTER_WORKERS: '2', POOL_THREADS: '1', LOG_LEVEL: 'info' },
      {
        readyPath: '/health/ready',
        readyLines: { pattern: /"msg":"process \d+ ready"/, count: 2 },
      },
    );
    service = cluster;
    expect(readyCount(cluster)).toBe(2);
    // Logged before the first fork: every process that reported ready started after it.
    const warnings = cluster.lines.filter((line) => WARNING.test(line));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 40,
      context: 'Primary',
      variable: 'CLUSTER_WORKERS',
      replacement: 'CLUSTER_PROCESSES',
    });
  });

  it('still runs one process without a primary, and warns once', async () => {
    const single = await startService({ CLUSTER_WORKERS: '1', POOL_THREADS: '1' });
    service = single;
    await single.waitForLine(WARNING);
    expect(single.lines.filter((line) => WARNING.test(line))).toHaveLength(1);
    expect(single.lines.some((line) => /"msg":"process \d+ started"/.test(line))).toBe(false);
  });

  it('refuses to start when both names are set to different values', async () => {
    const refused = await launchProcess({
      env: { CLUSTER_WORKERS: '2', CLUSTER_PROCESSES: '3' },
      readyPath: null,
    });
    service = refused;
    expect((await refused.exited).code).toBe(1);
    expect(refused.lines.join('\n')).toContain(
      'CLUSTER_WORKERS is the old name of CLUSTER_PROCESSES: set only CLUSTER_PROCESSES (got CLUSTER_WORKERS="2" and CLUSTER_PROCESSES="3")',
    );
  });
});
