import { resolve } from 'node:path';
import {
  BUILT_MAIN,
  launchProcess,
  type LaunchOptions,
  type ServiceProcess,
} from '../../test/support/service-process';
import { sumMainThreadCpuMicros } from '../../test/support/process-tree';
import { forAnyBuild } from './older-builds';

export const ROOT = resolve(__dirname, '..', '..');
const TSX = require.resolve('tsx/cjs');

/** A server under test: a child process (and, for the cluster, its children). */
export type Server = Pick<ServiceProcess, 'label' | 'url' | 'pid' | 'rssMiB'> & {
  /**
   * CPU time (user + system) used so far by the main thread of the process and of each
   * descendant (the event loops; worker threads excluded), in microseconds.
   */
  mainThreadCpuMicros(): number;
  /** SIGTERM, as an orchestrator stops it; SIGKILL to what is left after 15 s. */
  stop(): Promise<void>;
};

/**
 * The built service (`dist/main.js`) as production runs it, with these settings;
 * another checkout's build when `checkout` names one.
 */
export function startService(
  label: string,
  env: Record<string, string>,
  checkout?: string,
): Promise<Server> {
  const processes = Number(env.CLUSTER_PROCESSES ?? '1');
  const level = env.LOG_LEVEL ?? 'info';
  return start({
    label,
    args: [checkout === undefined ? BUILT_MAIN : resolve(checkout, 'dist', 'main.js')],
    cwd: checkout,
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      ...(checkout === undefined ? env : forAnyBuild(env)),
    },
    // Nest prints this once per HTTP process, when its threads are warm
    // (not printed below info: then the liveness probe alone says ready).
    readyLines: ['info', 'debug', 'trace'].includes(level)
      ? { pattern: /Nest application successfully started/, count: processes }
      : undefined,
  });
}

/** A baseline server from bench/baselines (TypeScript, run through tsx). */
export function startBaseline(
  label: string,
  file: string,
  env: Record<string, string> = {},
): Promise<Server> {
  return start({
    label,
    args: ['--require', TSX, resolve(ROOT, 'bench', 'baselines', file)],
    env,
    readyLines: { pattern: /^listening/, count: 1 },
  });
}

/** Any Node.js program (`args`), e.g. an example app and its peer; ready once `/health/live` answers. */
export function startProgram(
  label: string,
  args: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<Server> {
  return start({ label, args, env, cwd });
}

async function start(
  options: Pick<LaunchOptions, 'label' | 'args' | 'env' | 'readyLines' | 'cwd'>,
): Promise<Server> {
  const server = await launchProcess({
    ...options,
    cwd: options.cwd ?? ROOT,
    timeoutMs: 60_000,
    discardOutputAfterReady: true,
  });
  return {
    label: server.label,
    url: server.url,
    pid: server.pid,
    rssMiB: () => server.rssMiB(),
    mainThreadCpuMicros: () => sumMainThreadCpuMicros(server.pid),
    stop: () => server.shutdown(),
  };
}
