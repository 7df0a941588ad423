import { resolve } from 'node:path';
import { maxQueueForMemory } from '@corepool/core';
import type { AppConfig } from './app-config';
import {
  PROPAGATORS,
  type EnvironmentVariables,
  type OtlpProtocol,
  type Propagator,
} from './environment-variables';
import { usableMemory, type MachineFacts } from './machine-facts';
import { memoryDefaults, type MemoryDefaults } from './memory-limits';

/**
 * Requests in progress per thread that `HTTP_INTAKE_MAX_IN_PROGRESS=auto`
 * reads while the event loop is saturated: enough to keep each thread's
 * batches full, few enough that the loop's turn comes round quickly
 * (docs/adr/0052-a-crowd-waits-in-line.md).
 */
export const AUTO_IN_PROGRESS_PER_THREAD = 64;

/** Share of the heap cap past which a thread is recycled (`WORKER_RECYCLE_HEAP_MB=auto`). */
export const AUTO_RECYCLE_HEAP_SHARE = 0.75;

/** Margin of the `auto` connection timeout over the task deadline, for writing the response. */
export const CONNECTION_TIMEOUT_MARGIN_MS = 10_000;

/**
 * Margin of the `auto` progress timeout over a task's deadline and grace: threads that all
 * run to their deadline start the next waiting task after that, so only past it is the
 * pool wedged rather than busy.
 */
export const PROGRESS_TIMEOUT_MARGIN_MS = 10_000;

/** What the environment of the process says beyond our own variables. */
export interface ProcessFacts {
  /** `NODE_OPTIONS` sets `--max-semi-space-size`: the operator's own, left alone. */
  readonly nodeOptionsSetSemiSpace: boolean;
  /** glibc malloc settings for the forked processes (ADR 0044). */
  readonly mallocEnv: Record<string, string>;
}

/** How many processes and threads run, and each one's memory: the other `auto` values follow. */
interface Shape {
  /** The memory the processes share (the container's limit, else the machine's). */
  readonly memoryBytes: number;
  readonly processes: number;
  readonly threads: number;
  readonly memory: MemoryDefaults;
}

/** The validated variables, their `auto` values resolved for this machine. */
export function resolveConfig(
  vars: EnvironmentVariables,
  machine: MachineFacts,
  facts: ProcessFacts,
): Omit<AppConfig, 'renamedVariables'> {
  const shape = resolveShape(vars, machine);
  return {
    http: httpConfig(vars, shape),
    cluster: {
      processes: shape.processes,
      schedulingPolicy: vars.CLUSTER_SCHEDULING_POLICY,
      maxSemiSpaceMb: facts.nodeOptionsSetSemiSpace ? 0 : vars.CLUSTER_MAX_SEMI_SPACE_MB,
      mallocEnv: facts.mallocEnv,
    },
    pool: poolConfig(vars, machine, shape),
    scheduler: schedulerConfig(vars, shape),
    auth: authConfig(vars, machine),
    quotas: {
      requestsPerSecond: vars.QUOTA_REQUESTS_PER_SECOND,
      tasksInFlight: vars.QUOTA_TASKS_IN_FLIGHT,
    },
    readiness: readinessConfig(vars),
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
    jobs: jobsConfig(vars, machine),
  };
}

function resolveShape(vars: EnvironmentVariables, machine: MachineFacts): Shape {
  const processes = vars.CLUSTER_PROCESSES === 'auto' ? machine.cores : vars.CLUSTER_PROCESSES;
  // Processes × threads should not exceed the cores: a CPU-bound thread beyond
  // that only adds context switches and makes every task slower (ADR 0006).
  const threads =
    vars.POOL_THREADS === 'auto'
      ? Math.max(1, Math.floor(machine.cores / processes))
      : vars.POOL_THREADS;
  const measured = machine.memoryBytes ?? usableMemory();
  const memoryBytes =
    vars.MEMORY_LIMIT_BYTES === 'auto' ? measured : Math.min(measured, vars.MEMORY_LIMIT_BYTES);
  const memory = memoryDefaults({
    memoryBytes,
    processes,
    threads,
    binaryBodyLimitBytes: vars.BINARY_BODY_LIMIT_BYTES,
  });
  return { memoryBytes, processes, threads, memory };
}

function httpConfig(vars: EnvironmentVariables, { memory, threads }: Shape): AppConfig['http'] {
  return {
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
    listenBacklog: vars.HTTP_LISTEN_BACKLOG,
    intake: {
      maxInProgress:
        vars.HTTP_INTAKE_MAX_IN_PROGRESS === 'auto'
          ? Math.max(1, threads) * AUTO_IN_PROGRESS_PER_THREAD
          : vars.HTTP_INTAKE_MAX_IN_PROGRESS,
      loopUtilization: vars.HTTP_INTAKE_LOOP_UTILIZATION,
    },
  };
}

function poolConfig(
  vars: EnvironmentVariables,
  machine: MachineFacts,
  { memoryBytes, processes, threads, memory }: Shape,
): AppConfig['pool'] {
  const heapCapMb =
    vars.WORKER_MAX_OLD_GENERATION_MB === 'auto'
      ? memory.heapCapMb
      : vars.WORKER_MAX_OLD_GENERATION_MB;
  return {
    threads,
    maxQueue:
      vars.POOL_MAX_QUEUE === 'auto'
        ? maxQueueForMemory(memoryBytes / processes, threads)
        : vars.POOL_MAX_QUEUE,
    taskTimeoutMs: vars.TASK_TIMEOUT_MS,
    maxOldGenerationMb: heapCapMb,
    maxTasksPerThread: vars.WORKER_MAX_TASKS,
    recycleHeapMb:
      vars.WORKER_RECYCLE_HEAP_MB === 'auto'
        ? Math.floor(heapCapMb * AUTO_RECYCLE_HEAP_SHARE)
        : vars.WORKER_RECYCLE_HEAP_MB,
    maxMemoryMb:
      vars.WORKER_MAX_MEMORY_MB === 'auto' ? memory.threadMemoryMb : vars.WORKER_MAX_MEMORY_MB,
    cancelGraceMs: vars.CANCEL_GRACE_MS,
    niceIncrement: vars.WORKER_NICE_INCREMENT,
    taskModules: (vars.TASK_MODULES ?? '')
      .split(',')
      .map((path) => path.trim())
      .filter((path) => path !== '')
      .map((path) => resolve(machine.cwd, path)),
  };
}

function schedulerConfig(vars: EnvironmentVariables, { threads }: Shape): AppConfig['scheduler'] {
  return {
    targetDelayMs: vars.SCHEDULER_TARGET_DELAY_MS,
    intervalMs: vars.SCHEDULER_INTERVAL_MS,
    costPriorMs: vars.SCHEDULER_COST_PRIOR_MS,
    clientKeyHeader: vars.CLIENT_KEY_HEADER,
    clientKeyHeaderTrusted: vars.CLIENT_KEY_HEADER_TRUSTED === 'true',
    jobsMaxThreads:
      vars.JOBS_MAX_THREADS === 'auto' ? Math.max(1, threads - 1) : vars.JOBS_MAX_THREADS,
    batchMaxTasks: vars.SCHEDULER_BATCH_MAX_TASKS,
    batchMaxMs: vars.SCHEDULER_BATCH_MAX_MS,
  };
}

/** File paths are resolved against the working directory, as the process started. */
function authConfig(vars: EnvironmentVariables, machine: MachineFacts): AppConfig['auth'] {
  const fromCwd = (path: string | undefined) =>
    path === undefined ? undefined : resolve(machine.cwd, path);
  return {
    mode: vars.AUTH_MODE,
    apiKeysFile: fromCwd(vars.AUTH_API_KEYS_FILE),
    defaultScopes: vars.AUTH_DEFAULT_SCOPES.split(' '),
    jwt: {
      jwksUrl: vars.AUTH_JWT_JWKS_URL,
      publicKeyFile: fromCwd(vars.AUTH_JWT_PUBLIC_KEY_FILE),
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
  };
}

function readinessConfig(vars: EnvironmentVariables): AppConfig['readiness'] {
  return {
    queueHighWater: vars.READY_QUEUE_HIGH_WATER === 'off' ? undefined : vars.READY_QUEUE_HIGH_WATER,
    progressTimeoutMs:
      vars.READY_PROGRESS_TIMEOUT_MS === 'auto'
        ? vars.TASK_TIMEOUT_MS + vars.CANCEL_GRACE_MS + PROGRESS_TIMEOUT_MARGIN_MS
        : vars.READY_PROGRESS_TIMEOUT_MS,
    maxEventLoopDelayMs: vars.READY_MAX_EVENT_LOOP_DELAY_MS,
  };
}

function jobsConfig(vars: EnvironmentVariables, machine: MachineFacts): AppConfig['jobs'] {
  return {
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
    resultEncryptionKey: encryptionKey(vars.RESULT_ENCRYPTION_KEY),
  };
}

/** Kept as base64 text: a frozen config cannot hold a Buffer (typed arrays refuse to freeze). */
function encryptionKey(written: string | undefined): string | undefined {
  if (written === undefined) return undefined;
  return Buffer.from(written, written.length === 64 ? 'hex' : 'base64').toString('base64');
}

/** The standard `OTEL_*` variables, with OpenTelemetry's precedence: a traces variable over the generic one (docs/observability.md). */
function tracingConfig(vars: EnvironmentVariables): AppConfig['tracing'] {
  const warnings: string[] = [];
  const protocol = vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? vars.OTEL_EXPORTER_OTLP_PROTOCOL;
  const endpoint = tracesEndpoint(vars, protocol);
  const resourceAttributes = keyValues(vars.OTEL_RESOURCE_ATTRIBUTES);
  const general = vars.OTEL_ATTRIBUTE_COUNT_LIMIT;
  return {
    enabled:
      endpoint !== undefined &&
      vars.OTEL_TRACES_EXPORTER !== 'none' &&
      !sdkDisabled(vars.OTEL_SDK_DISABLED, warnings),
    endpoint,
    protocol,
    headers: {
      ...keyValues(vars.OTEL_EXPORTER_OTLP_HEADERS ?? ''),
      ...keyValues(vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? ''),
    },
    exportTimeoutMs: vars.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? vars.OTEL_EXPORTER_OTLP_TIMEOUT,
    compression: vars.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? vars.OTEL_EXPORTER_OTLP_COMPRESSION,
    serviceName: vars.OTEL_SERVICE_NAME ?? resourceAttributes['service.name'] ?? 'corepool',
    resourceAttributes,
    sampler: vars.OTEL_TRACES_SAMPLER,
    samplerRatio: vars.OTEL_TRACES_SAMPLER_ARG,
    maxTracesPerSecond: vars.TRACING_MAX_TRACES_PER_SECOND,
    propagators: propagatorsOf(vars.OTEL_PROPAGATORS, warnings),
    exportDelayMs: vars.OTEL_BSP_SCHEDULE_DELAY,
    batchTimeoutMs: vars.OTEL_BSP_EXPORT_TIMEOUT,
    maxQueueSize: vars.OTEL_BSP_MAX_QUEUE_SIZE,
    maxExportBatchSize: vars.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    spanLimits: {
      attributeValueLengthLimit:
        vars.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT ?? vars.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT,
      attributeCountLimit: vars.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT ?? general,
      eventCountLimit: vars.OTEL_SPAN_EVENT_COUNT_LIMIT,
      linkCountLimit: vars.OTEL_SPAN_LINK_COUNT_LIMIT,
      attributePerEventCountLimit: vars.OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT ?? general,
      attributePerLinkCountLimit: vars.OTEL_LINK_ATTRIBUTE_COUNT_LIMIT ?? general,
    },
    logLevel: vars.OTEL_LOG_LEVEL,
    niceIncrement: vars.WORKER_NICE_INCREMENT,
    jobsSystem: vars.REDIS_URL === undefined ? 'corepool' : 'bullmq',
    warnings,
  };
}

/**
 * The traces endpoint is used as it is written; the generic one is a base, to which the
 * HTTP protocols append the signal's path (gRPC has none): OpenTelemetry's exporter rules.
 */
function tracesEndpoint(vars: EnvironmentVariables, protocol: OtlpProtocol): string | undefined {
  if (vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined) {
    return vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  }
  const base = vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (base === undefined || protocol === 'grpc') return base;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** OpenTelemetry's booleans: `true` in any case is true; anything else false, with a warning unless it is `false`. */
function sdkDisabled(value: string | undefined, warnings: string[]): boolean {
  const lower = value?.toLowerCase();
  if (lower === 'true') return true;
  if (lower !== undefined && lower !== 'false') {
    warnings.push(`OTEL_SDK_DISABLED=${value} is neither true nor false: read as false`);
  }
  return false;
}

/** The known formats in order, once each; `none` alone means none, an unknown one is ignored with a warning. */
function propagatorsOf(value: string, warnings: string[]): Propagator[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.includes('none')) {
    if (names.length > 1)
      warnings.push(`OTEL_PROPAGATORS=${value}: none given, nothing is propagated`);
    return [];
  }
  const known: Propagator[] = [];
  for (const name of names) {
    const propagator = PROPAGATORS.find((candidate) => candidate === name);
    if (propagator === undefined) {
      warnings.push(
        `OTEL_PROPAGATORS: '${name}' is not supported (tracecontext, baggage, none): ignored`,
      );
    } else if (!known.includes(propagator)) {
      known.push(propagator);
    }
  }
  return known;
}

/** OpenTelemetry's `key=value,…` lists, values percent-decoded. */
function keyValues(list: string): Record<string, string> {
  return Object.fromEntries(
    list
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at).trim(), safeDecode(pair.slice(at + 1).trim())];
      }),
  );
}

/** OpenTelemetry percent-encodes resource values; a stray `%` is kept as written. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
