import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/load-config';

export const FAULT_TASKS = resolve(__dirname, '../fixtures/fault-tasks.js');

/** A config built the way production builds it, from environment strings. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig(
    {
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '2',
      LOG_LEVEL: 'silent',
      TASK_MODULES: FAULT_TASKS,
      // Tests ask the operator routes faster than an operator would and expect fresh answers:
      // the per-client limit and the health cache are tested where they are the subject.
      OPERATOR_REQUESTS_PER_SECOND: '0',
      HEALTH_CACHE_MS: '0',
      // A job store of its own: tests never share one (nor write in the checkout).
      JOBS_SQLITE_PATH: join(mkdtempSync(join(tmpdir(), 'corepool-jobs-')), 'jobs.sqlite'),
      ...env,
    },
    { cores: 2, stdoutIsTty: false, cwd: process.cwd() },
  );
}
