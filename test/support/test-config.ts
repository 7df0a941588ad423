import { resolve } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/load-config';

export const FAULT_TASKS = resolve(__dirname, '../fixtures/fault-tasks.js');

/** A config built the way production builds it, from environment strings. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig(
    {
      CLUSTER_WORKERS: '1',
      POOL_THREADS: '2',
      LOG_LEVEL: 'silent',
      TASK_MODULES: FAULT_TASKS,
      ...env,
    },
    { cores: 2, stdoutIsTty: false, cwd: process.cwd() },
  );
}
