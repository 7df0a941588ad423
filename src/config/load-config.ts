import { availableParallelism, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { validateSync, type ValidationError } from 'class-validator';
import type { AppConfig } from './app-config';
import { EnvironmentVariables } from './environment-variables';
import { mallocEnv } from './malloc-env';
import { cgroupMemoryLimit, memoryDefaults, usableMemoryBytes } from './memory-limits';
import { plainToInstance } from './plain-to-instance';

/**
 * Queue slots per thread when `POOL_MAX_QUEUE=auto`. The scheduler admits by
 * time and the body budget bounds the bytes, so this only bounds bookkeeping
 * (about 47 KiB of RSS per waiting request, its connection included). It
 * must hold every client that waits: at 16 per thread, 40 impatient clients
 * on 2 threads overfilled it, each newcomer shed a waiting task, and the
 * 503s they retried at once took the cores from the threads (goodput 0.63 ×
 * capacity, against 1.20 × at 256; docs/adr/0020-backstop-holds-the-waiting-clients.md).
 */
export const AUTO_QUEUE_PER_THREAD = 128;

/** Every variable corepool reads; nothing else in the environment is looked at. */
const VARIABLE_NAMES = [
  ...Object.keys(new EnvironmentVariables()),
  'ADMIN_PORT',
  'REDIS_URL',
  'RESULT_ENCRYPTION_KEY',
  'TASK_MODULES',
  'NODE_ENV',
  'AUTH_API_KEYS_FILE',
  'AUTH_JWT_JWKS_URL',
  'AUTH_JWT_PUBLIC_KEY_FILE',
  'AUTH_JWT_ISSUER',
  'AUTH_JWT_AUDIENCE',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(readonly problems: readonly string[]) {
    super(`Invalid environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export interface MachineFacts {
  /** Cores this process may use (`os.availableParallelism()`). */
  readonly cores: number;
  readonly stdoutIsTty: boolean;
  readonly cwd: string;
  /** Memory this process may use: its cgroup limit when there is one, else the machine's. */
  readonly memoryBytes?: number;
}

/** The container's memory limit when there is one, else the machine's (ADR 0044). */
const usableMemory = (): number =>
  usableMemoryBytes({
    totalBytes: totalmem(),
    constrainedBytes: process.constrainedMemory(),
    cgroupBytes: cgroupMemoryLimit(),
  });

const currentMachine = (): MachineFacts => ({
  cores: availableParallelism(),
  stdoutIsTty: process.stdout.isTTY === true,
  cwd: process.cwd(),
  memoryBytes: usableMemory(),
});

/** Share of the heap cap past which a thread is recycled (`WORKER_RECYCLE_HEAP_MB=auto`). */
export const AUTO_RECYCLE_HEAP_SHARE = 0.75;

/**
 * Parses and validates the environment once. Every offending variable is
 * listed in the thrown ConfigError. Empty strings count as unset, as in a
 * Kubernetes manifest that declares a variable without a value.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  machine: MachineFacts = currentMachine(),
): AppConfig {
  const raw: Record<string, string> = {};
  for (const key of VARIABLE_NAMES) {
    const value = env[key]?.trim();
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const vars = plainToInstance(EnvironmentVariables, raw);
  const errors = validateSync(vars, { forbidUnknownValues: true, stopAtFirstError: true });
  if (errors.length > 0) throw new ConfigError(errors.flatMap((error) => describe(error, raw)));
  const conflicts = crossChecks(vars);
  if (conflicts.length > 0) throw new ConfigError(conflicts);
  // NODE_OPTIONS is Node's, not ours: only read to leave an operator's own semi-space alone.
  const nodeOptionsSetSemiSpace = /--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? '');
  // glibc's, not ours: read only to leave an operator's own malloc settings alone.
  return deepFreeze(resolveConfig(vars, machine, nodeOptionsSetSemiSpace, mallocEnv(env)));
}

/** The message with the value as it was written, not as it was converted (`'x'`, not NaN). */
function describe(error: ValidationError, raw: Record<string, string>): string[] {
  const value = JSON.stringify(raw[error.property] ?? error.value);
  return Object.values(error.constraints ?? {}).map((message) => `${message} (got ${value})`);
}

/** Rules between variables, checked once each variable is valid on its own. */
function crossChecks(vars: EnvironmentVariables): string[] {
  const problems: string[] = [];
  // Node refuses a headers timeout longer than the request timeout that contains it.
  if (vars.HTTP_HEADERS_TIMEOUT_MS > vars.HTTP_REQUEST_TIMEOUT_MS) {
    problems.push(
      `HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (got ${vars.HTTP_HEADERS_TIMEOUT_MS} > ${vars.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  }
  if (vars.ADMIN_PORT !== undefined && vars.ADMIN_PORT === vars.PORT) {
    problems.push(`ADMIN_PORT must differ from PORT (got ${vars.ADMIN_PORT})`);
  }
  // A body within its route's limit must be able to fit, or it could only ever get 503.
  const budget = vars.BODY_MEMORY_BUDGET_BYTES;
  if (budget !== 'auto' && budget < vars.BINARY_BODY_LIMIT_BYTES) {
    problems.push(
      `BODY_MEMORY_BUDGET_BYTES must be at least BINARY_BODY_LIMIT_BYTES (got ${budget} < ${vars.BINARY_BODY_LIMIT_BYTES})`,
    );
  }
  // A socket is silent while its task runs: a shorter idle timeout would cut valid requests.
  const connection = vars.HTTP_CONNECTION_TIMEOUT_MS;
  if (connection !== 'auto' && connection > 0 && connection <= vars.TASK_TIMEOUT_MS) {
    problems.push(
      `HTTP_CONNECTION_TIMEOUT_MS must be 0 or longer than TASK_TIMEOUT_MS (got ${connection} <= ${vars.TASK_TIMEOUT_MS})`,
    );
  }
  problems.push(...authChecks(vars));
  return problems;
}

/** Each mode's own settings must be there: a service meant to check callers must not start open. */
function authChecks(vars: EnvironmentVariables): string[] {
  if (vars.AUTH_MODE === 'api-key' && vars.AUTH_API_KEYS_FILE === undefined) {
    return ['AUTH_MODE=api-key needs AUTH_API_KEYS_FILE'];
  }
  if (vars.AUTH_MODE !== 'jwt') return [];
  const problems: string[] = [];
  const keySources = [vars.AUTH_JWT_JWKS_URL, vars.AUTH_JWT_PUBLIC_KEY_FILE].filter(
    (source) => source !== undefined,
  );
  if (keySources.length !== 1) {
    problems.push('AUTH_MODE=jwt needs one of AUTH_JWT_JWKS_URL and AUTH_JWT_PUBLIC_KEY_FILE');
  }
  if (vars.AUTH_JWT_ISSUER === undefined) problems.push('AUTH_MODE=jwt needs AUTH_JWT_ISSUER');
  if (vars.AUTH_JWT_AUDIENCE === undefined) problems.push('AUTH_MODE=jwt needs AUTH_JWT_AUDIENCE');
  return problems;
}

/** Margin of the `auto` connection timeout over the task deadline, for writing the response. */
export const CONNECTION_TIMEOUT_MARGIN_MS = 10_000;

/**
 * Margin of the `auto` progress timeout over a task's deadline and grace: threads that all
 * run to their deadline start the next waiting task after that, so only past it is the
 * pool wedged rather than busy.
 */
export const PROGRESS_TIMEOUT_MARGIN_MS = 10_000;

function resolveConfig(
  vars: EnvironmentVariables,
  machine: MachineFacts,
  nodeOptionsSetSemiSpace = false,
  processMallocEnv: Record<string, string> = {},
): AppConfig {
  const clusterWorkers = vars.CLUSTER_WORKERS === 'auto' ? machine.cores : vars.CLUSTER_WORKERS;
  // Processes × threads should not exceed the cores: a CPU-bound thread beyond
  // that only adds context switches and makes every task slower.
  const threads =
    vars.POOL_THREADS === 'auto'
      ? Math.max(1, Math.floor(machine.cores / clusterWorkers))
      : vars.POOL_THREADS;
  const memory = memoryDefaults({
    memoryBytes: machine.memoryBytes ?? usableMemory(),
    processes: clusterWorkers,
    threads,
    binaryBodyLimitBytes: vars.BINARY_BODY_LIMIT_BYTES,
  });
  const maxMemoryMb =
    vars.WORKER_MAX_MEMORY_MB === 'auto' ? memory.threadMemoryMb : vars.WORKER_MAX_MEMORY_MB;
  const heapCapMb =
    vars.WORKER_MAX_OLD_GENERATION_MB === 'auto'
      ? memory.heapCapMb
      : vars.WORKER_MAX_OLD_GENERATION_MB;
  const recycleHeapMb =
    vars.WORKER_RECYCLE_HEAP_MB === 'auto'
      ? Math.floor(heapCapMb * AUTO_RECYCLE_HEAP_SHARE)
      : vars.WORKER_RECYCLE_HEAP_MB;
  const maxQueue =
    vars.POOL_MAX_QUEUE === 'auto'
      ? Math.max(1, threads) * AUTO_QUEUE_PER_THREAD
      : vars.POOL_MAX_QUEUE;
  return {
    http: {
      port: vars.PORT,
      host: vars.HOST,
      adminPort: vars.ADMIN_PORT,
      docsEnabled: vars.DOCS_ENABLED === 'true',
      trustProxy: vars.TRUST_PROXY.split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
      bodyMemoryBudgetBytes:
        vars.BODY_MEMORY_BUDGET_BYTES === 'auto'
          ? memory.bodyBudgetBytes
          : vars.BODY_MEMORY_BUDGET_BYTES,
      bodyLimitBytes: vars.BODY_LIMIT_BYTES,
      maxJsonNodes: vars.BODY_MAX_JSON_NODES,
      binaryBodyLimitBytes: vars.BINARY_BODY_LIMIT_BYTES,
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: vars.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionTimeoutMs:
        vars.HTTP_CONNECTION_TIMEOUT_MS === 'auto'
          ? Math.max(vars.TASK_TIMEOUT_MS, vars.HTTP_REQUEST_TIMEOUT_MS) +
            CONNECTION_TIMEOUT_MARGIN_MS
          : vars.HTTP_CONNECTION_TIMEOUT_MS,
      maxRequestsPerConnection: vars.HTTP_MAX_REQUESTS_PER_CONNECTION,
      maxConnectionAgeMs: vars.HTTP_MAX_CONNECTION_AGE_MS,
    },
    cluster: {
      workers: clusterWorkers,
      schedulingPolicy: vars.CLUSTER_SCHEDULING_POLICY,
      maxSemiSpaceMb: nodeOptionsSetSemiSpace ? 0 : vars.CLUSTER_MAX_SEMI_SPACE_MB,
      mallocEnv: processMallocEnv,
    },
    pool: {
      threads,
      maxQueue,
      taskTimeoutMs: vars.TASK_TIMEOUT_MS,
      maxOldGenerationMb: heapCapMb,
      maxTasksPerThread: vars.WORKER_MAX_TASKS,
      recycleHeapMb,
      maxMemoryMb,
      cancelGraceMs: vars.CANCEL_GRACE_MS,
      niceIncrement: vars.WORKER_NICE_INCREMENT,
      taskModules: (vars.TASK_MODULES ?? '')
        .split(',')
        .map((path) => path.trim())
        .filter((path) => path !== '')
        .map((path) => resolve(machine.cwd, path)),
    },
    scheduler: {
      targetDelayMs: vars.SCHEDULER_TARGET_DELAY_MS,
      intervalMs: vars.SCHEDULER_INTERVAL_MS,
      costPriorMs: vars.SCHEDULER_COST_PRIOR_MS,
      clientKeyHeader: vars.CLIENT_KEY_HEADER,
      clientKeyHeaderTrusted: vars.CLIENT_KEY_HEADER_TRUSTED === 'true',
      jobsMaxThreads:
        vars.JOBS_MAX_THREADS === 'auto' ? Math.max(1, threads - 1) : vars.JOBS_MAX_THREADS,
      batchMaxTasks: vars.SCHEDULER_BATCH_MAX_TASKS,
      batchMaxMs: vars.SCHEDULER_BATCH_MAX_MS,
    },
    auth: {
      mode: vars.AUTH_MODE,
      apiKeysFile:
        vars.AUTH_API_KEYS_FILE === undefined
          ? undefined
          : resolve(machine.cwd, vars.AUTH_API_KEYS_FILE),
      defaultScopes: vars.AUTH_DEFAULT_SCOPES.split(' '),
      jwt: {
        jwksUrl: vars.AUTH_JWT_JWKS_URL,
        publicKeyFile:
          vars.AUTH_JWT_PUBLIC_KEY_FILE === undefined
            ? undefined
            : resolve(machine.cwd, vars.AUTH_JWT_PUBLIC_KEY_FILE),
        issuer: vars.AUTH_JWT_ISSUER,
        audience: vars.AUTH_JWT_AUDIENCE,
        clockSkewSeconds: vars.AUTH_JWT_CLOCK_SKEW_S,
        clientClaim: vars.AUTH_JWT_CLIENT_CLAIM,
        scopesClaim: vars.AUTH_JWT_SCOPES_CLAIM,
        jwksCooldownMs: vars.AUTH_JWT_JWKS_COOLDOWN_MS,
        requireExp: vars.AUTH_JWT_REQUIRE_EXP === 'true',
        maxTokenAgeSeconds:
          vars.AUTH_JWT_MAX_TOKEN_AGE_S === 0 ? undefined : vars.AUTH_JWT_MAX_TOKEN_AGE_S,
      },
    },
    quotas: {
      requestsPerSecond: vars.QUOTA_REQUESTS_PER_SECOND,
      tasksInFlight: vars.QUOTA_TASKS_IN_FLIGHT,
    },
    readiness: {
      queueHighWater:
        vars.READY_QUEUE_HIGH_WATER === 'off' ? undefined : vars.READY_QUEUE_HIGH_WATER,
      progressTimeoutMs:
        vars.READY_PROGRESS_TIMEOUT_MS === 'auto'
          ? vars.TASK_TIMEOUT_MS + vars.CANCEL_GRACE_MS + PROGRESS_TIMEOUT_MARGIN_MS
          : vars.READY_PROGRESS_TIMEOUT_MS,
      maxEventLoopDelayMs: vars.READY_MAX_EVENT_LOOP_DELAY_MS,
    },
    operator: {
      requestsPerSecond: vars.OPERATOR_REQUESTS_PER_SECOND,
      healthCacheMs: vars.HEALTH_CACHE_MS,
    },
    shutdown: { delayMs: vars.SHUTDOWN_DELAY_MS, timeoutMs: vars.SHUTDOWN_TIMEOUT_MS },
    metrics: { cacheMs: vars.METRICS_CACHE_MS },
    log: {
      level: vars.LOG_LEVEL,
      pretty: vars.NODE_ENV !== 'production' && machine.stdoutIsTty,
    },
    tracing: tracingConfig(vars),
    jobs: {
      redisUrl: vars.REDIS_URL,
      queuePrefix: vars.JOBS_QUEUE_PREFIX,
      attempts: vars.JOBS_ATTEMPTS,
      backoffMs: vars.JOBS_BACKOFF_MS,
      resultTtlSeconds: vars.JOBS_RESULT_TTL_SECONDS,
      lockDurationMs: vars.JOBS_LOCK_DURATION_MS,
      maxStored: vars.JOBS_MAX_STORED,
      maxStoredBytes: vars.JOBS_MAX_STORED_BYTES,
      maxResultBytes: vars.JOBS_MAX_RESULT_BYTES,
      sqlitePath: resolve(machine.cwd, vars.JOBS_SQLITE_PATH),
      sqliteCheckIntervalMs: vars.JOBS_SQLITE_CHECK_INTERVAL_MS,
      pollIntervalMs: vars.JOBS_POLL_INTERVAL_MS,
      purgeIntervalMs: vars.JOBS_PURGE_INTERVAL_MS,
      eventsHeartbeatMs: vars.JOBS_EVENTS_HEARTBEAT_MS,
      eventsMaxStreams: vars.JOBS_EVENTS_MAX_STREAMS,
      eventsMaxStreamsPerClient: vars.JOBS_EVENTS_MAX_STREAMS_PER_CLIENT,
      maxBodyBytes: vars.JOBS_MAX_BODY_BYTES,
      // Kept as text: a frozen config cannot hold a Buffer (typed arrays refuse to freeze).
      resultEncryptionKey:
        vars.RESULT_ENCRYPTION_KEY === undefined
          ? undefined
          : Buffer.from(
              vars.RESULT_ENCRYPTION_KEY,
              vars.RESULT_ENCRYPTION_KEY.length === 64 ? 'hex' : 'base64',
            ).toString('base64'),
    },
  };
}

/** The standard `OTEL_*` variables: on only with an endpoint and without `OTEL_SDK_DISABLED=true`. */
function tracingConfig(vars: EnvironmentVariables): AppConfig['tracing'] {
  return {
    enabled: vars.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined && vars.OTEL_SDK_DISABLED !== 'true',
    endpoint: vars.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: vars.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: vars.OTEL_SERVICE_NAME,
    sampler: vars.OTEL_TRACES_SAMPLER,
    samplerRatio: vars.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: vars.OTEL_BSP_SCHEDULE_DELAY,
    resourceAttributes: Object.fromEntries(
      vars.OTEL_RESOURCE_ATTRIBUTES.split(',')
        .filter((pair) => pair.includes('='))
        .map((pair) => {
          const at = pair.indexOf('=');
          return [pair.slice(0, at).trim(), safeDecode(pair.slice(at + 1).trim())];
        }),
    ),
  };
}

/** OpenTelemetry percent-encodes resource values; a stray `%` is kept as written. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
