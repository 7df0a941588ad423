import { ConfigError, loadConfig, type MachineFacts } from './load-config';

const GiB = 1024 ** 3;
const machine: MachineFacts = {
  cores: 4,
  stdoutIsTty: false,
  cwd: '/srv/corepool',
  memoryBytes: 8 * GiB,
};

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env, machine);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe(loadConfig.name, () => {
  it('sizes the body budget from the memory a process may use, never below one binary body', () => {
    const budget = (env: Record<string, string>, memoryBytes: number) =>
      loadConfig(env, { ...machine, memoryBytes }).http.bodyMemoryBudgetBytes;
    // A 1 GiB pod of one process: a tenth of what its base leaves of 85 %, one 64 MiB upload.
    expect(budget({ CLUSTER_PROCESSES: '1' }, GiB)).toBe(72_813_117);
    expect(budget({ CLUSTER_PROCESSES: '4' }, GiB)).toBe(67_108_864);
    // MEMORY_LIMIT_BYTES below the machine's memory plays a container's limit.
    expect(budget({ CLUSTER_PROCESSES: '1', MEMORY_LIMIT_BYTES: String(GiB) }, 8 * GiB)).toBe(
      72_813_117,
    );
    expect(budget({ CLUSTER_PROCESSES: '1', MEMORY_LIMIT_BYTES: String(16 * GiB) }, GiB)).toBe(
      72_813_117,
    );
    expect(budget({ BODY_MEMORY_BUDGET_BYTES: '100000000' }, GiB)).toBe(100_000_000);
  });

  it('bounds the heap per thread by the container, with a ceiling, and lets explicit values win', () => {
    const pool = (env: Record<string, string>, memoryBytes: number) =>
      loadConfig(env, { ...machine, memoryBytes }).pool;
    // A 2 GiB container, 2 processes of 1 thread: 592 MiB a thread, 296 of it heap.
    expect(pool({ CLUSTER_PROCESSES: '2', POOL_THREADS: '1' }, 2 * GiB)).toMatchObject({
      maxMemoryMb: 592,
      maxOldGenerationMb: 296,
    });
    // A 64 GiB machine: the ceilings, not gigabytes of heap per thread.
    expect(pool({ CLUSTER_PROCESSES: '2' }, 64 * GiB)).toMatchObject({
      maxMemoryMb: 2048,
      maxOldGenerationMb: 1024,
    });
    expect(
      pool({ WORKER_MAX_OLD_GENERATION_MB: '3000', WORKER_MAX_MEMORY_MB: '5000' }, 64 * GiB),
    ).toMatchObject({ maxMemoryMb: 5000, maxOldGenerationMb: 3000, recycleHeapMb: 2250 });
  });

  it('refuses a body budget below the binary body limit, and an admin port equal to the port', () => {
    expect(problemsOf({ BODY_MEMORY_BUDGET_BYTES: '1048576' })).toEqual([
      'BODY_MEMORY_BUDGET_BYTES must be at least BINARY_BODY_LIMIT_BYTES (got 1048576 < 67108864)',
    ]);
    expect(problemsOf({ PORT: '8080', ADMIN_PORT: '8080' })).toEqual([
      'ADMIN_PORT must differ from PORT (got 8080)',
    ]);
    expect(problemsOf({ DOCS_ENABLED: 'no' })).toEqual([
      expect.stringContaining('DOCS_ENABLED') as unknown,
    ]);
  });

  it('applies the documented defaults', () => {
    const config = loadConfig({}, machine);
    expect(config.http).toEqual({
      port: 3000,
      host: '127.0.0.1',
      adminPort: undefined,
      docsEnabled: true,
      trustProxy: [],
      // A quarter of 8 GiB over 4 processes is 512 MiB: the ceiling holds it to 256.
      bodyMemoryBudgetBytes: 164_081_172,
      bodyLimitBytes: 1_048_576,
      maxJsonNodes: 10_000,
      binaryBodyLimitBytes: 67_108_864,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      connectionTimeoutMs: 70_000,
      maxRequestsPerConnection: 0,
      maxConnectionAgeMs: 60_000,
      listenBacklog: 65_535,
      // One thread in each of the 4 processes: 64 requests in progress before the loop pushes back.
      intake: { maxInProgress: 64, loopUtilization: 0.9 },
    });
    expect(config.cluster.schedulingPolicy).toBe('kernel');
    expect(config.cluster.maxSemiSpaceMb).toBe(0);
    expect(config.pool).toMatchObject({
      taskTimeoutMs: 30_000,
      maxTasksPerThread: 0,
      // 85 % of 8 GiB over 4 processes, less a base and a body budget, then half for the heap.
      maxMemoryMb: 1376,
      maxOldGenerationMb: 688,
      recycleHeapMb: 516,
    });
    // Saturation never fails readiness by default; a wedged pool does, after deadline + grace + 10 s.
    expect(config.readiness).toEqual({
      queueHighWater: undefined,
      progressTimeoutMs: 40_300,
      maxEventLoopDelayMs: 200,
    });
    expect(config.operator).toEqual({ requestsPerSecond: 10, healthCacheMs: 1_000 });
    // auto: 4 cores, 4 processes of 1 thread, so jobs may take that one thread.
    expect(config.scheduler).toEqual({
      targetDelayMs: 100,
      intervalMs: 500,
      costPriorMs: 50,
      clientKeyHeader: 'x-client-id',
      clientKeyHeaderTrusted: false,
      jobsMaxThreads: 1,
      batchMaxTasks: 8,
      batchMaxMs: 2,
    });
    expect(config.shutdown).toEqual({ delayMs: 0, timeoutMs: 25_000 });
    expect(config.metrics).toEqual({ cacheMs: 1_000 });
    expect(config.log).toEqual({ level: 'info', pretty: false });
    expect(config.jobs).toEqual({
      redisUrl: undefined,
      queuePrefix: 'corepool',
      attempts: 3,
      backoffMs: 1000,
      resultTtlSeconds: 3600,
      lockDurationMs: 30_000,
      maxStored: 10_000,
      maxStoredBytes: 1_073_741_824,
      maxResultBytes: 16_777_216,
      // Relative to the working directory, which the Dockerfile and manifests mount.
      sqlitePath: '/srv/corepool/data/jobs.sqlite',
      sqliteCheckIntervalMs: 1000,
      pollIntervalMs: 200,
      purgeIntervalMs: 60_000,
      eventsHeartbeatMs: 15_000,
      eventsMaxStreams: 1_000,
      eventsMaxStreamsPerClient: 16,
      maxBodyBytes: 16_777_216,
      resultEncryptionKey: undefined,
    });
  });

  it('accepts a result encryption key as hex or base64, and refuses any other length', () => {
    const key = Buffer.alloc(32, 7);
    const fromHex = loadConfig({ RESULT_ENCRYPTION_KEY: key.toString('hex') }, machine);
    const fromBase64 = loadConfig({ RESULT_ENCRYPTION_KEY: key.toString('base64') }, machine);
    expect(fromHex.jobs.resultEncryptionKey).toBe(key.toString('base64'));
    expect(fromBase64.jobs.resultEncryptionKey).toBe(key.toString('base64'));
    expect(problemsOf({ RESULT_ENCRYPTION_KEY: Buffer.alloc(16).toString('hex') })).toEqual([
      expect.stringContaining('RESULT_ENCRYPTION_KEY must be 32 bytes'),
    ]);
  });

  it('sizes auto so that processes × threads equals the cores', () => {
    expect(loadConfig({}, machine)).toMatchObject({
      cluster: { processes: 4 },
      pool: { threads: 1 },
    });
    expect(loadConfig({ CLUSTER_PROCESSES: '1' }, machine)).toMatchObject({
      cluster: { processes: 1 },
      pool: { threads: 4 },
    });
    expect(loadConfig({ CLUSTER_PROCESSES: '2' }, machine).pool.threads).toBe(2);
    expect(loadConfig({ CLUSTER_PROCESSES: '8' }, machine).pool.threads).toBe(1);
  });

  it('still reads CLUSTER_WORKERS as CLUSTER_PROCESSES, and lists it for the warning at start', () => {
    const old = loadConfig({ CLUSTER_WORKERS: '2' }, machine);
    expect(old.cluster.processes).toBe(2);
    expect(old.pool.threads).toBe(2);
    expect(old.renamedVariables).toEqual([
      { old: 'CLUSTER_WORKERS', current: 'CLUSTER_PROCESSES' },
    ]);
    expect(loadConfig({ CLUSTER_PROCESSES: '2' }, machine).renamedVariables).toEqual([]);
    // Both set alike, as in a manifest in transition: accepted, still warned about.
    const both = loadConfig({ CLUSTER_WORKERS: '2', CLUSTER_PROCESSES: ' 2' }, machine);
    expect(both.cluster.processes).toBe(2);
    expect(both.renamedVariables).toHaveLength(1);
  });

  it('refuses CLUSTER_WORKERS and CLUSTER_PROCESSES set to different values, with the other problems', () => {
    expect(problemsOf({ CLUSTER_WORKERS: '2', CLUSTER_PROCESSES: '3', PORT: 'x' })).toEqual([
      'CLUSTER_WORKERS is the old name of CLUSTER_PROCESSES: set only CLUSTER_PROCESSES (got CLUSTER_WORKERS="2" and CLUSTER_PROCESSES="3")',
      expect.stringContaining('PORT') as unknown,
    ]);
  });

  it('names the old name a bad value was written under', () => {
    expect(problemsOf({ CLUSTER_WORKERS: 'x' })).toEqual([
      'CLUSTER_PROCESSES must be `auto` or a whole number (got "x", set as CLUSTER_WORKERS)',
    ]);
  });

  it('leaves one thread to synchronous callers when JOBS_MAX_THREADS=auto', () => {
    const config = loadConfig({ CLUSTER_PROCESSES: '1' }, machine);
    expect(config.scheduler.jobsMaxThreads).toBe(3);
    expect(loadConfig({ JOBS_MAX_THREADS: '4' }, machine).scheduler.jobsMaxThreads).toBe(4);
    expect(problemsOf({ CLIENT_KEY_HEADER: 'X Client' })).toEqual([
      'CLIENT_KEY_HEADER must be a lower-case header name (got "X Client")',
    ]);
  });

  it('takes an explicit readiness high-water mark and progress timeout', () => {
    expect(
      loadConfig(
        { READY_QUEUE_HIGH_WATER: '0.5', READY_PROGRESS_TIMEOUT_MS: '0', TASK_TIMEOUT_MS: '5000' },
        machine,
      ).readiness,
    ).toMatchObject({ queueHighWater: 0.5, progressTimeoutMs: 0 });
    expect(loadConfig({ TASK_TIMEOUT_MS: '5000' }, machine).readiness.progressTimeoutMs).toBe(
      15_300,
    );
    expect(problemsOf({ READY_QUEUE_HIGH_WATER: 'never' })).toEqual([
      expect.stringContaining('READY_QUEUE_HIGH_WATER must be `off` or a number'),
    ]);
  });

  it('derives the auto queue limit from the memory a process may hold in waiting tasks', () => {
    // A sixteenth of 8 GiB in 16 KiB per waiting task; the processes share it.
    expect(loadConfig({ CLUSTER_PROCESSES: '1' }, machine).pool.maxQueue).toBe(32_768);
    expect(loadConfig({ CLUSTER_PROCESSES: '4' }, machine).pool.maxQueue).toBe(8_192);
    // Never below 128 per thread, however little memory there is.
    const small = { ...machine, memoryBytes: 64 * 1024 * 1024 };
    expect(loadConfig({ CLUSTER_PROCESSES: '1' }, small).pool.maxQueue).toBe(512);
    expect(loadConfig({ POOL_MAX_QUEUE: '5' }, machine).pool.maxQueue).toBe(5);
  });

  it('accepts explicit numbers, including POOL_THREADS=0 for inline mode', () => {
    const config = loadConfig(
      { POOL_THREADS: '0', PORT: '8080', READY_QUEUE_HIGH_WATER: '0.5' },
      machine,
    );
    expect(config).toMatchObject({
      pool: { threads: 0 },
      http: { port: 8080 },
      readiness: { queueHighWater: 0.5 },
    });
  });

  it('leaves the HTTP processes’ semi-space to NODE_OPTIONS when it sets one', () => {
    expect(loadConfig({ CLUSTER_MAX_SEMI_SPACE_MB: '8' }, machine).cluster.maxSemiSpaceMb).toBe(8);
    expect(
      loadConfig(
        { NODE_OPTIONS: '--max-semi-space-size=32', CLUSTER_MAX_SEMI_SPACE_MB: '8' },
        machine,
      ).cluster.maxSemiSpaceMb,
    ).toBe(0);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', WORKER_MAX_OLD_GENERATION_MB: ' ' }, machine).http.port).toBe(
      3000,
    );
  });

  it('resolves task modules against the working directory', () => {
    expect(loadConfig({ TASK_MODULES: 'a.js, /opt/b.js' }, machine).pool.taskModules).toEqual([
      '/srv/corepool/a.js',
      '/opt/b.js',
    ]);
  });

  it('lists every offending variable at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      POOL_THREADS: 'lots',
      TASK_TIMEOUT_MS: '0',
      READY_QUEUE_HIGH_WATER: '2',
      LOG_LEVEL: 'loud',
      REDIS_URL: 'localhost:6379',
    });
    for (const name of [
      'PORT',
      'POOL_THREADS',
      'TASK_TIMEOUT_MS',
      'READY_QUEUE_HIGH_WATER',
      'LOG_LEVEL',
      'REDIS_URL',
    ]) {
      expect(problems.some((problem) => problem.includes(name))).toBe(true);
    }
    expect(problems.length).toBeGreaterThanOrEqual(6);
  });

  it('names the bad value in each problem', () => {
    expect(problemsOf({ CLUSTER_PROCESSES: 'x' })).toEqual([
      expect.stringContaining('CLUSTER_PROCESSES must be `auto` or a whole number'),
    ]);
  });

  it('derives the connection timeout from the slower of task and request, unless given', () => {
    expect(loadConfig({ TASK_TIMEOUT_MS: '90000' }, machine).http.connectionTimeoutMs).toBe(
      100_000,
    );
    expect(loadConfig({ HTTP_CONNECTION_TIMEOUT_MS: '0' }, machine).http.connectionTimeoutMs).toBe(
      0,
    );
  });

  it('refuses timeouts that contradict each other', () => {
    expect(
      problemsOf({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' }),
    ).toEqual([expect.stringContaining('HTTP_HEADERS_TIMEOUT_MS must not exceed')]);
    expect(problemsOf({ HTTP_CONNECTION_TIMEOUT_MS: '20000' })).toEqual([
      expect.stringContaining(
        'HTTP_CONNECTION_TIMEOUT_MS must be 0 or longer than TASK_TIMEOUT_MS',
      ),
    ]);
  });

  it('reads TRUST_PROXY as a list of addresses and ranges, and refuses anything else', () => {
    const config = loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback,fd00::1' }, machine);
    expect(config.http.trustProxy).toEqual(['10.0.0.0/8', 'loopback', 'fd00::1']);
    for (const bad of ['true', '10.0.0.1;rm', '10.0.0.0/8,,']) {
      expect(problemsOf({ TRUST_PROXY: bad })).toEqual([
        expect.stringContaining('TRUST_PROXY must be comma-separated addresses, CIDR ranges'),
      ]);
    }
  });

  it('starts with no authentication and no quotas by default', () => {
    const config = loadConfig({}, machine);
    expect(config.auth.mode).toBe('none');
    expect(config.auth.defaultScopes).toEqual(['tasks:run', 'jobs:read', 'jobs:write']);
    expect(config.auth.jwt).toMatchObject({
      clockSkewSeconds: 30,
      clientClaim: 'sub',
      requireExp: true,
      maxTokenAgeSeconds: undefined,
    });
    expect(config.quotas).toEqual({ requestsPerSecond: 0, tasksInFlight: 0 });
  });

  it('refuses an authentication mode without the settings it needs', () => {
    expect(problemsOf({ AUTH_MODE: 'basic' })).toEqual([expect.stringContaining('AUTH_MODE')]);
    expect(problemsOf({ AUTH_MODE: 'api-key' })).toEqual([
      'AUTH_MODE=api-key needs AUTH_API_KEYS_FILE',
    ]);
    expect(problemsOf({ AUTH_MODE: 'jwt' })).toEqual([
      'AUTH_MODE=jwt needs one of AUTH_JWT_JWKS_URL and AUTH_JWT_PUBLIC_KEY_FILE',
      'AUTH_MODE=jwt needs AUTH_JWT_ISSUER',
      'AUTH_MODE=jwt needs AUTH_JWT_AUDIENCE',
    ]);
    const jwt = { AUTH_MODE: 'jwt', AUTH_JWT_ISSUER: 'https://idp', AUTH_JWT_AUDIENCE: 'corepool' };
    expect(
      problemsOf({
        ...jwt,
        AUTH_JWT_JWKS_URL: 'https://idp/jwks',
        AUTH_JWT_PUBLIC_KEY_FILE: 'k.pem',
      }),
    ).toEqual([expect.stringContaining('needs one of')]);
    expect(problemsOf({ ...jwt, AUTH_JWT_JWKS_URL: 'ftp://idp/jwks' })).toEqual([
      expect.stringContaining('AUTH_JWT_JWKS_URL must be an http(s) URL'),
    ]);
  });

  it('resolves the key files against the working directory', () => {
    const config = loadConfig(
      { AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: 'secrets/keys' },
      machine,
    );
    expect(config.auth.apiKeysFile).toBe('/srv/corepool/secrets/keys');
  });

  it('freezes the result', () => {
    const config = loadConfig({}, machine);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.pool)).toBe(true);
    expect(Object.isFrozen(config.pool.taskModules)).toBe(true);
  });

  it('writes readable logs only for a developer on a terminal', () => {
    expect(loadConfig({}, { ...machine, stdoutIsTty: true }).log.pretty).toBe(true);
    expect(
      loadConfig({ NODE_ENV: 'production' }, { ...machine, stdoutIsTty: true }).log.pretty,
    ).toBe(false);
  });
});

describe('loadConfig: the OTEL_* variables', () => {
  const tracing = (env: Record<string, string>) => loadConfig(env, machine).tracing;

  it('leaves tracing off without an endpoint, and with OTEL_SDK_DISABLED=true', () => {
    expect(tracing({}).enabled).toBe(false);
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled).toBe(true);
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })
        .enabled,
    ).toBe(false);
  });

  it('reads the standard defaults and resource attributes, values percent-decoded', () => {
    expect(
      tracing({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=a%2Cb' }),
    ).toMatchObject({
      protocol: 'http/protobuf',
      serviceName: 'corepool',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      resourceAttributes: { 'deployment.environment.name': 'prod', team: 'a,b' },
    });
  });

  it('uses the traces endpoint as written, and appends /v1/traces to the generic one over HTTP only', () => {
    const generic = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/base/' };
    expect(tracing(generic).endpoint).toBe('http://collector:4318/base/v1/traces');
    expect(
      tracing({ ...generic, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/here' }),
    ).toMatchObject({ enabled: true, endpoint: 'http://traces:4318/here' });
    // gRPC has no path: the generic endpoint is used as it is.
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })
        .endpoint,
    ).toBe('http://c:4317');
    expect(
      tracing({ ...generic, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318' }).enabled,
    ).toBe(true);
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318' }).enabled).toBe(true);
  });

  it('takes each traces variable over the generic one', () => {
    expect(
      tracing({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=3',
        OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none',
      }),
    ).toMatchObject({
      protocol: 'http/json',
      headers: { a: '1', b: '3' },
      exportTimeoutMs: 700,
      compression: 'none',
    });
  });

  it('names the service from OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, then corepool', () => {
    const attributes = { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' };
    expect(tracing(attributes).serviceName).toBe('from-attributes');
    expect(tracing({ ...attributes, OTEL_SERVICE_NAME: 'named' }).serviceName).toBe('named');
    expect(tracing({}).serviceName).toBe('corepool');
  });

  it.each([
    ['TRUE', false, []],
    ['True', false, []],
    ['false', true, []],
    ['FALSE', true, []],
    ['1', true, ['OTEL_SDK_DISABLED=1 is neither true nor false: read as false']],
    ['yes', true, ['OTEL_SDK_DISABLED=yes is neither true nor false: read as false']],
  ])('reads OTEL_SDK_DISABLED=%s as the specification does', (value, enabled, warnings) => {
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: value }),
    ).toMatchObject({ enabled, warnings });
  });

  it('turns tracing off with OTEL_TRACES_EXPORTER=none', () => {
    expect(
      tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })
        .enabled,
    ).toBe(false);
  });

  it('reads OTEL_PROPAGATORS: the known ones once each, none, and a warning for the rest', () => {
    expect(tracing({}).propagators).toEqual(['tracecontext', 'baggage']);
    expect(tracing({ OTEL_PROPAGATORS: 'baggage, tracecontext,baggage' }).propagators).toEqual([
      'baggage',
      'tracecontext',
    ]);
    expect(tracing({ OTEL_PROPAGATORS: 'none' })).toMatchObject({ propagators: [], warnings: [] });
    expect(tracing({ OTEL_PROPAGATORS: 'tracecontext,b3' })).toMatchObject({
      propagators: ['tracecontext'],
      warnings: [expect.stringContaining("'b3' is not supported")],
    });
  });

  it('refuses an export batch larger than the queue', () => {
    expect(
      problemsOf({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '200' }),
    ).toEqual([expect.stringContaining('OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed')]);
  });

  it('lists every bad OTEL_* value', () => {
    expect(
      problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }),
    ).toEqual([
      expect.stringContaining('OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL'),
      expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL'),
      expect.stringContaining('OTEL_TRACES_SAMPLER_ARG'),
    ]);
  });
});
