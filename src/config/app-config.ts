import type { PoolSettings } from '@corepool/core';
import type {
  AuthMode,
  ClusterSchedulingPolicy,
  LogLevel,
  OtelLogLevel,
  OtlpCompression,
  OtlpProtocol,
  Propagator,
  TraceSampler,
} from './environment-variables';
import type { RenamedVariable } from './renamed-variables';

/**
 * The typed, resolved and frozen configuration. `auto` values are resolved
 * here, once, so the rest of the code only ever sees numbers.
 */
export abstract class AppConfig {
  /**
   * Old variable names found in the environment: each is warned about once, at start (ADR 0049).
   */
  abstract readonly renamedVariables: readonly RenamedVariable[];
  abstract readonly http: {
    readonly port: number;
    readonly host: string;
    /** Set: `/metrics` and the detailed `/health` listen here only, on `host`. */
    readonly adminPort: number | undefined;
    /** Swagger UI at `/docs` and the OpenAPI document at `/docs-json`. */
    readonly docsEnabled: boolean;
    /** Proxies (addresses, CIDR ranges) whose `X-Forwarded-For` is believed; empty: none. */
    readonly trustProxy: readonly string[];
    /** Bytes of request bodies this process holds at once; past it: 503 (reason `memory`). */
    readonly bodyMemoryBudgetBytes: number;
    readonly bodyLimitBytes: number;
    /** Most strings, arrays and objects a JSON body may hold; counted before it is parsed. */
    readonly maxJsonNodes: number;
    readonly binaryBodyLimitBytes: number;
    /** Time to receive a request's headers (slow headers are cut off with 408). */
    readonly headersTimeoutMs: number;
    /** Time to receive a whole request, body included (slow bodies are cut off with 408). */
    readonly requestTimeoutMs: number;
    /** An idle keep-alive connection is closed after this long. */
    readonly keepAliveTimeoutMs: number;
    /** A socket with no traffic either way for this long is closed; 0 never. */
    readonly connectionTimeoutMs: number;
    /** Requests per keep-alive connection; 0: no limit. */
    readonly maxRequestsPerConnection: number;
    /** A connection older than this is closed after its next response; 0: never. */
    readonly maxConnectionAgeMs: number;
    /**
     * Connections waiting to be accepted that the kernel keeps (capped by `net.core.somaxconn`).
     */
    readonly listenBacklog: number;
    /** Pushing back at the socket when the event loop is the limit (`IntakeGate`). */
    readonly intake: {
      /** Requests in progress past which connections wait, unread; 0: never. */
      readonly maxInProgress: number;
      /** Event-loop utilization from which the loop counts as saturated. */
      readonly loopUtilization: number;
    };
  };
  abstract readonly cluster: {
    /** HTTP processes (`CLUSTER_PROCESSES`); 1 means no primary, no fork. */
    readonly processes: number;
    /**
     * `kernel`: the processes accept from one shared socket; `round-robin`: the primary hands
     * connections on.
     */
    readonly schedulingPolicy: ClusterSchedulingPolicy;
    /**
     * `--max-semi-space-size` (MiB) for the forked HTTP processes; 0: V8's default, or
     * `NODE_OPTIONS` sets it.
     */
    readonly maxSemiSpaceMb: number;
    /** glibc malloc settings added to the forked HTTP processes' environment (ADR 0044). */
    readonly mallocEnv: Readonly<Record<string, string>>;
  };
  /**
   * The worker threads of each process and how a task ends: the engine's own settings
   * (`@corepool/core`).
   */
  abstract readonly pool: PoolSettings['pool'];
  abstract readonly scheduler: {
    /** CoDel's target queue delay under overload (ms). */
    readonly targetDelayMs: number;
    /** How long the delay stays above the target before the queue is overloaded (ms). */
    readonly intervalMs: number;
    /** Estimated run time of a task never measured (ms). */
    readonly costPriorMs: number;
    /** Request header that carries the fair-share key (lower case). */
    readonly clientKeyHeader: string;
    /** The header is the quota key of unauthenticated callers; false: their address is. */
    readonly clientKeyHeaderTrusted: boolean;
    /** Threads asynchronous jobs may hold at once. */
    readonly jobsMaxThreads: number;
    /** Most small tasks one thread takes in one message; 1: no batches. */
    readonly batchMaxTasks: number;
    /** Estimated thread time of one batch (ms): only tasks this short are batched. */
    readonly batchMaxMs: number;
  };
  /** Who may call (docs/security.md). */
  abstract readonly auth: {
    readonly mode: AuthMode;
    /** `api-key`: the file of `name:sha256hex(key)[:scopes]` lines. */
    readonly apiKeysFile: string | undefined;
    /** Scopes of a key or token that names none. */
    readonly defaultScopes: readonly string[];
    readonly jwt: {
      readonly jwksUrl: string | undefined;
      readonly publicKeyFile: string | undefined;
      readonly issuer: string | undefined;
      readonly audience: string | undefined;
      readonly clockSkewSeconds: number;
      readonly clientClaim: string;
      readonly scopesClaim: string;
      readonly jwksCooldownMs: number;
      /** A token without `exp` is refused. */
      readonly requireExp: boolean;
      /** A token older than this (from its `iat`) is refused; undefined: no maximum. */
      readonly maxTokenAgeSeconds: number | undefined;
    };
  };
  /** Per-client limits; 0 is no limit. */
  abstract readonly quotas: {
    readonly requestsPerSecond: number;
    readonly tasksInFlight: number;
  };
  abstract readonly readiness: {
    /** Share of the queue limit at which readiness fails; undefined: saturation never fails it. */
    readonly queueHighWater: number | undefined;
    /** Tasks waiting and none started for this long fail readiness (a wedged pool); 0: never. */
    readonly progressTimeoutMs: number;
    readonly maxEventLoopDelayMs: number;
  };
  /** The operator routes (metrics, detailed health). */
  abstract readonly operator: {
    /** Per client and process; 0 is no limit. */
    readonly requestsPerSecond: number;
    /** A gathering of the detailed health answers later requests for this long (ms). */
    readonly healthCacheMs: number;
  };
  abstract readonly shutdown: {
    readonly delayMs: number;
    readonly timeoutMs: number;
  };
  abstract readonly metrics: {
    /** A collection answers later scrapes for this long (ms); 0: only concurrent ones. */
    readonly cacheMs: number;
  };
  abstract readonly log: {
    readonly level: LogLevel;
    /** Human-readable lines: development on a terminal only. */
    readonly pretty: boolean;
  };
  /** OpenTelemetry tracing, from the standard `OTEL_*` variables (docs/observability.md). */
  abstract readonly tracing: {
    /**
     * An endpoint is set, `OTEL_TRACES_EXPORTER` is not `none` and `OTEL_SDK_DISABLED` is not true;
     * false: the SDK is never loaded.
     */
    readonly enabled: boolean;
    /**
     * Where traces go, as the exporter takes it: the traces endpoint as written, or the base
     * endpoint with `/v1/traces` (HTTP).
     */
    readonly endpoint: string | undefined;
    readonly protocol: OtlpProtocol;
    /** The export's headers, the traces ones over the generic ones key by key. */
    readonly headers: Readonly<Record<string, string>>;
    readonly exportTimeoutMs: number;
    readonly compression: OtlpCompression;
    /** `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `corepool`. */
    readonly serviceName: string;
    readonly resourceAttributes: Readonly<Record<string, string>>;
    readonly sampler: TraceSampler;
    /** The `*traceidratio` samplers' share of traces, 0..1. */
    readonly samplerRatio: number;
    /** Most traces a second this process keeps, whatever the sampler and the callers ask. */
    readonly maxTracesPerSecond: number;
    /** The W3C formats read from requests and stored with jobs, in order; empty: `none`. */
    readonly propagators: readonly Propagator[];
    /** Longest a finished span waits before it is exported (ms). */
    readonly exportDelayMs: number;
    /** Longest the batch processor waits for one export (ms). */
    readonly batchTimeoutMs: number;
    /** Most finished spans held for export, queued or being sent. */
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
    /** The SDK's limits on what a span keeps (the `OTEL_*_LIMIT` variables). */
    readonly spanLimits: {
      readonly attributeValueLengthLimit: number | undefined;
      readonly attributeCountLimit: number;
      readonly eventCountLimit: number;
      readonly linkCountLimit: number;
      readonly attributePerEventCountLimit: number;
      readonly attributePerLinkCountLimit: number;
    };
    /** `OTEL_LOG_LEVEL`: what of the SDK's own diagnostics is logged. */
    readonly logLevel: OtelLogLevel;
    /** `WORKER_NICE_INCREMENT`: the export thread lowers its priority as the task threads do. */
    readonly niceIncrement: number;
    /**
     * `messaging.system` of the job spans: `corepool` (its own SQLite queue) or `bullmq` (on
     * Redis).
     */
    readonly jobsSystem: 'corepool' | 'bullmq';
    /**
     * What the variables asked that was read another way than written, logged when tracing starts.
     */
    readonly warnings: readonly string[];
  };
  abstract readonly jobs: {
    /** Set: BullMQ on this Redis; unset: the SQLite store. */
    readonly redisUrl: string | undefined;
    /** BullMQ key prefix; replicas with the same prefix share the queue. */
    readonly queuePrefix: string;
    /** Runs per job (BullMQ): retries after a crash, and stalls of a killed process. */
    readonly attempts: number;
    /** First retry delay (exponential backoff). */
    readonly backoffMs: number;
    /** Finished jobs (results, errors) are kept this long. */
    readonly resultTtlSeconds: number;
    /** BullMQ lock per running job; a process dead for this long has its job taken over. */
    readonly lockDurationMs: number;
    /** Jobs kept at most (queued and running ones are never dropped). */
    readonly maxStored: number;
    /** Bytes of stored jobs at most (inputs, bodies, results). */
    readonly maxStoredBytes: number;
    /** Largest stored result, as JSON. */
    readonly maxResultBytes: number;
    /** The SQLite store's file, absolute. */
    readonly sqlitePath: string;
    /** SQLite store: period of the check that the open file is still the one at `sqlitePath`. */
    readonly sqliteCheckIntervalMs: number;
    /** SQLite store: claim, lease renewal and cancel polling period. */
    readonly pollIntervalMs: number;
    /** SQLite store: purge of expired jobs, vacuum and checkpoint period. */
    readonly purgeIntervalMs: number;
    /** Server-Sent Events: heartbeat period of a quiet stream. */
    readonly eventsHeartbeatMs: number;
    /** Server-Sent Events: streams this process holds open at most. */
    readonly eventsMaxStreams: number;
    /** Server-Sent Events: streams one client may hold open on this process. */
    readonly eventsMaxStreamsPerClient: number;
    /** Raw body limit of a binary job (it is kept until the job runs). */
    readonly maxBodyBytes: number;
    /** AES-256-GCM key for results of jobs submitted with `encrypt`, base64 of 32 bytes. */
    readonly resultEncryptionKey: string | undefined;
  };
}
