import { describeSoak, runSoak } from '../bench/soak';
import { startService, type ServiceProcess } from './support/service-process';

// The CI version of `npm run soak`: 30 s at ~70 % of the capacity measured on this machine,
// against the built service as production runs it. Zero errors is the assertion; latency and
// memory are printed, not asserted (this machine is shared).

const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 30);

jest.setTimeout((SECONDS + 60) * 1000);

describe('Soak (30 s at ~70 % of capacity)', () => {
  let service: ServiceProcess;
  afterAll(() => service.stop());

  it('answers every request without an error', async () => {
    service = await startService({
      LOG_LEVEL: 'warn',
      TASK_MODULES: '',
      // This machine is shared: its capacity can dip well below what was measured. A deeper
      // queue rides such dips out (the 30 s deadline still bounds every wait); admission
      // control itself is tested by the burst test, not here.
      POOL_MAX_QUEUE: '256',
    });
    const report = await runSoak({
      url: service.url,
      pid: service.child.pid ?? 0,
      durationMs: SECONDS * 1000,
      load: 0.7,
      calibrationMs: 5_000,
      reportEveryMs: 5_000,
      log: (line) => process.stdout.write(`${line}\n`),
    });
    console.log(describeSoak(report));
    expect(report.sent).toBeGreaterThan(0);
    expect(report.errors).toEqual({});
    expect(report.succeeded).toBe(report.sent);
  });
});
