import 'reflect-metadata';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { Transform, Type } from './plain-to-instance';

/** `auto` or a whole number: the string stays `auto`, anything else becomes a number (NaN fails). */
const autoOrNumber = () =>
  Transform(({ value }: { value: unknown }) => (value === 'auto' ? 'auto' : Number(value)));
const isNotAuto = (property: keyof EnvironmentVariables) => (env: EnvironmentVariables) =>
  env[property] !== 'auto';
/** `off` or a number: the string stays `off`, anything else becomes a number (NaN fails). */
const offOrNumber = () =>
  Transform(({ value }: { value: unknown }) => (value === 'off' ? 'off' : Number(value)));
const isNotOff = (property: keyof EnvironmentVariables) => (env: EnvironmentVariables) =>
  env[property] !== 'off';

/** How the cluster's processes share the port; see docs/adr/0010-kernel-distributes-connections.md. */
export const CLUSTER_SCHEDULING_POLICIES = ['kernel', 'round-robin'] as const;
export type ClusterSchedulingPolicy = (typeof CLUSTER_SCHEDULING_POLICIES)[number];

/** Who may call; see docs/security.md. */
/** One entry of `TRUST_PROXY`: proxy-addr's preset names, or an address with an optional prefix length. */
const PROXY = String.raw`(?:loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(?:/\d{1,3})?)`;
/** Empty, or entries separated by commas. */
const TRUSTED_PROXIES = new RegExp(String.raw`^(?:\s*${PROXY}\s*(?:,\s*${PROXY}\s*)*)?$`);

export const AUTH_MODES = ['none', 'api-key', 'jwt'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** `OTEL_EXPORTER_OTLP_PROTOCOL`: the OTLP transports (OpenTelemetry's standard values). */
export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** `OTEL_EXPORTER_OTLP_COMPRESSION`: OpenTelemetry's standard values. */
export const OTLP_COMPRESSIONS = ['gzip', 'none'] as const;
export type OtlpCompression = (typeof OTLP_COMPRESSIONS)[number];

/** `OTEL_TRACES_EXPORTER`: the standard values corepool supports. */
export const TRACE_EXPORTERS = ['otlp', 'none'] as const;
export type TraceExporter = (typeof TRACE_EXPORTERS)[number];

/** `OTEL_PROPAGATORS`: the W3C formats corepool reads and writes (`none` is the empty list). */
export const PROPAGATORS = ['tracecontext', 'baggage'] as const;
export type Propagator = (typeof PROPAGATORS)[number];

/** `OTEL_LOG_LEVEL`: the SDK's diagnostic levels. */
export const OTEL_LOG_LEVELS = [
  'none',
  'error',
  'warn',
  'info',
  'debug',
  'verbose',
  'all',
] as const;
export type OtelLogLevel = (typeof OTEL_LOG_LEVELS)[number];

/** OpenTelemetry's `key=value,key=value` lists (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`). */
const KEY_VALUE_LIST = /^(?:\s*[^=,\s]+\s*=[^,]*(?:,\s*[^=,\s]+\s*=[^,]*)*)?$/;

/** `OTEL_TRACES_SAMPLER`: OpenTelemetry's standard sampler names that corepool supports. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Validation stops at a variable's first failed rule. Decorators apply
 * bottom-up, so the type check sits nearest the property: `PORT=eighty` is
 * reported as not a number, not as out of range.
 *
 * The raw environment, one property per variable. docs/configuration.md is
 * generated from this class (`npm run docs:config`): each doc comment is the
 * variable's description there, and a test fails when the two differ.
 * Property initializers are the defaults. Every variable is validated at once,
 * so a bad environment is reported whole, not one variable per restart.
 */
export class EnvironmentVariables {
  /** Port to listen on. */
  @Type(() => Number)
  @Min(0)
  @Max(65535)
  @IsInt()
  PORT = 3000;

  /** Address to listen on. Loopback by default, so a service started with no set-up (and `AUTH_MODE=none`) is not open to the network; the container image sets `0.0.0.0`. */
  @IsString()
  HOST = '127.0.0.1';

  /** Set: `/metrics` and the detailed `/health` are served on this port only (same address as `PORT`), and the public port answers them with 404; it keeps the API and the probes `/health/live` and `/health/ready`. Unset: everything on `PORT`. Must differ from `PORT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(1)
  @Max(65535)
  @IsInt()
  ADMIN_PORT?: number;

  /** How long a scrape's collection of every process answers later scrapes too; concurrent scrapes share one collection whatever this is. `0`: every scrape that finds none running collects anew. */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  METRICS_CACHE_MS = 1_000;

  /** Requests per second one client address (an IPv6 client by its subnet) may make to the operator routes (`/metrics`, the detailed `/health`), on whichever port serves them, per process; past it: 429 `RATE_LIMITED`, answered when the client's second is over, so a client that retries at once cannot turn refusals into a flood of their own. `0`: no limit. */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  OPERATOR_REQUESTS_PER_SECOND = 10;

  /** How long one gathering of the detailed `/health` answers later requests too; concurrent requests share one gathering whatever this is. `0`: every request that finds none running gathers anew. */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  HEALTH_CACHE_MS = 1_000;

  /** `false`: no Swagger UI at `/docs` and no OpenAPI document at `/docs-json` (404). `true`: both, served from the few Swagger UI files the page needs. */
  @IsIn(['true', 'false'])
  DOCS_ENABLED: 'true' | 'false' = 'true';

  /** HTTP processes (cluster processes; the threads inside each are `POOL_THREADS`). `auto`: one per usable core; `1` runs one process without forking (the mode for Kubernetes). Formerly `CLUSTER_WORKERS`: that name is still read, with a warning at start, and both set to different values is a configuration error (docs/adr/0049-threads-are-workers-processes-are-processes.md). */
  @autoOrNumber()
  @ValidateIf(isNotAuto('CLUSTER_PROCESSES'))
  @Min(1)
  @Max(256)
  @IsInt({ message: 'CLUSTER_PROCESSES must be `auto` or a whole number' })
  CLUSTER_PROCESSES: number | 'auto' = 'auto';

  /** How the cluster's processes share the port. `kernel`: every process accepts from the one listening socket, so a connection is never handed to a process that has died. `round-robin`: Node's default, the primary accepts and hands each connection on; one handed to a process as it is killed hangs until the client gives up (docs/lifecycle.md). */
  @IsIn(CLUSTER_SCHEDULING_POLICIES)
  CLUSTER_SCHEDULING_POLICY: ClusterSchedulingPolicy = 'kernel';

  /** V8's largest young-generation semi-space, in MiB, for each HTTP process the primary forks (`--max-semi-space-size`, ADR 0024). Each scavenge stops the event loop for as long as it copies what survived: a smaller young generation makes the pauses shorter and more frequent, and costs small tasks throughput for the extra collections (the measurements are in the ADR). `0`: V8's default, the default; 2 where the tail latency of small requests matters more than their throughput. Not applied when `NODE_OPTIONS` sets `--max-semi-space-size`, nor with `CLUSTER_PROCESSES=1` (no fork: set it in `NODE_OPTIONS` there). */
  @Type(() => Number)
  @Min(0)
  @Max(1024)
  @IsInt()
  CLUSTER_MAX_SEMI_SPACE_MB = 0;

  /** Worker threads per process. `auto`: usable cores ÷ processes, at least 1. `0` runs tasks inline on the event loop (for comparison only). */
  @autoOrNumber()
  @ValidateIf(isNotAuto('POOL_THREADS'))
  @Min(0)
  @Max(1024)
  @IsInt({ message: 'POOL_THREADS must be `auto` or a whole number' })
  POOL_THREADS: number | 'auto' = 'auto';

  /** Tasks waiting per process, a memory backstop (the scheduler admits by time); past it: 503 `POOL_SATURATED`. `auto`: 128 per thread. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('POOL_MAX_QUEUE'))
  @Min(0)
  @Max(1_000_000)
  @IsInt({ message: 'POOL_MAX_QUEUE must be `auto` or a whole number' })
  POOL_MAX_QUEUE: number | 'auto' = 'auto';

  /** Deadline per task, counted from the request's arrival (queue time included); past it: 504 `TASK_TIMEOUT`. */
  @Type(() => Number)
  @Min(1)
  @Max(86_400_000)
  @IsInt()
  TASK_TIMEOUT_MS = 30_000;

  /** Queue delay the scheduler holds tasks near under sustained overload (CoDel's target): past it for `SCHEDULER_INTERVAL_MS`, the newest waiting task runs first, and a task without a client deadline that would wait longer than this plus its own run time gets 503 `POOL_SATURATED` (see docs/overload.md). */
  @Type(() => Number)
  @Min(1)
  @Max(60_000)
  @IsInt()
  SCHEDULER_TARGET_DELAY_MS = 100;

  /** How long the queue delay must stay above `SCHEDULER_TARGET_DELAY_MS` before the pool counts as overloaded (CoDel's interval); it stays so until the queue empties. */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  SCHEDULER_INTERVAL_MS = 500;

  /** Estimated run time of a task never measured yet, for admission by time; its first run replaces it. */
  @Type(() => Number)
  @Min(0)
  @Max(86_400_000)
  @IsInt()
  SCHEDULER_COST_PRIOR_MS = 50;

  /** Most small tasks a free thread takes in one message when several wait (one `postMessage`, one wake-up and one answer for all of them; see docs/adr/0023-small-tasks-go-to-threads-in-batches.md). `1`: one task per message. */
  @Type(() => Number)
  @Min(1)
  @Max(256)
  @IsInt()
  SCHEDULER_BATCH_MAX_TASKS = 8;

  /** Estimated thread time of one batch, all its tasks together: only tasks estimated this short are batched, and the first task of a batch waits about this long for its answer at most. */
  @Type(() => Number)
  @Min(0)
  @Max(1_000)
  SCHEDULER_BATCH_MAX_MS = 2;

  /** Request header whose value is the caller's fair-share key when authentication does not identify it; absent or not 1-64 letters, digits, `. : _ -`: the one shared key. */
  @Matches(/^[a-z0-9-]{1,64}$/, {
    message: 'CLIENT_KEY_HEADER must be a lower-case header name',
  })
  CLIENT_KEY_HEADER = 'x-client-id';

  /** `true`: the value of `CLIENT_KEY_HEADER` is trusted as the caller's quota key when authentication is off (set it only when a gateway in front sets or overwrites the header). `false`: the quota key of an unauthenticated caller is its address (see `TRUST_PROXY`), so a client cannot escape its quota by changing the header. */
  @IsIn(['true', 'false'])
  CLIENT_KEY_HEADER_TRUSTED: 'true' | 'false' = 'false';

  /** Proxies whose `X-Forwarded-For` gives the caller's address (for its quota and the access log): comma-separated addresses or CIDR ranges (`10.0.0.0/8`), or `loopback`, `linklocal`, `uniquelocal`. Empty: the connection's own address. Never name addresses clients can reach directly: they could then choose their address. */
  @Matches(TRUSTED_PROXIES, {
    message:
      'TRUST_PROXY must be comma-separated addresses, CIDR ranges, loopback, linklocal or uniquelocal',
  })
  TRUST_PROXY = '';

  /** Who may call. `none`: every caller is one anonymous client (a warning is logged when `HOST` is not loopback). `api-key`: keys listed in `AUTH_API_KEYS_FILE`, sent as `x-api-key` or `Authorization: Bearer`. `jwt`: tokens of an identity provider, `Authorization: Bearer`, checked against `AUTH_JWT_JWKS_URL` or `AUTH_JWT_PUBLIC_KEY_FILE` (docs/security.md). */
  @IsIn(AUTH_MODES)
  AUTH_MODE: AuthMode = 'none';

  /** `api-key`: a file of `name:sha256hex(key)[:scope,scope]` lines (`#` comments), re-read on SIGHUP and when it changes, so keys rotate without a restart. A line without scopes gets `AUTH_DEFAULT_SCOPES`. `name:revoked` revokes a key, `!no-keys` says the file holds none on purpose; a file without keys and without it, one that ends mid-line, names an unknown scope, or (on reload) drops a key in use without `name:revoked` is refused, and the previous keys stay in use (docs/security.md). */
  @IsOptional()
  @IsString()
  AUTH_API_KEYS_FILE?: string;

  /** Scopes of an API key listed without any, and of a token without the scopes claim (space-separated). */
  @Matches(/^[\w:.-]+(?: [\w:.-]+)*$/, {
    message: 'AUTH_DEFAULT_SCOPES must be space-separated scope names',
  })
  AUTH_DEFAULT_SCOPES = 'tasks:run jobs:read jobs:write';

  /** `jwt`: the identity provider's JWKS; fetched when first needed, kept for 10 minutes, fetched again when a token names an unknown `kid` (at most once per `AUTH_JWT_JWKS_COOLDOWN_MS`). */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'AUTH_JWT_JWKS_URL must be an http(s) URL' })
  AUTH_JWT_JWKS_URL?: string;

  /** `jwt`: a PEM public key (SPKI) that signs the tokens, instead of a JWKS URL. */
  @IsOptional()
  @IsString()
  AUTH_JWT_PUBLIC_KEY_FILE?: string;

  /** `jwt`: the `iss` every token must carry. Required in `jwt` mode. */
  @IsOptional()
  @IsString()
  AUTH_JWT_ISSUER?: string;

  /** `jwt`: the `aud` every token must name (this service). Required in `jwt` mode. */
  @IsOptional()
  @IsString()
  AUTH_JWT_AUDIENCE?: string;

  /** `jwt`: seconds of clock difference tolerated on `exp` and `nbf`. */
  @Type(() => Number)
  @Min(0)
  @Max(600)
  @IsInt()
  AUTH_JWT_CLOCK_SKEW_S = 30;

  /** `jwt`: `true` refuses a token without `exp`: a token that never expires stays valid for as long as its signing key is published. */
  @IsIn(['true', 'false'])
  AUTH_JWT_REQUIRE_EXP: 'true' | 'false' = 'true';

  /** `jwt`: a token is refused once this many seconds have passed since its `iat`, which it must then carry, whatever its `exp` says. `0`: no maximum (an `iat` in the future beyond the clock skew is refused either way). */
  @Type(() => Number)
  @Min(0)
  @Max(31_536_000)
  @IsInt()
  AUTH_JWT_MAX_TOKEN_AGE_S = 0;

  /** `jwt`: the claim that names the client (its jobs' owner, its fair share, its quota). Not 1-64 letters, digits, `. : _ -`: the client id is a hash of it. */
  @Matches(/^[\w.:-]{1,64}$/, { message: 'AUTH_JWT_CLIENT_CLAIM must be a claim name' })
  AUTH_JWT_CLIENT_CLAIM = 'sub';

  /** `jwt`: the claim that carries scopes: a space-separated string (`scope`) or an array (`scp`). */
  @Matches(/^[\w.:-]{1,64}$/, { message: 'AUTH_JWT_SCOPES_CLAIM must be a claim name' })
  AUTH_JWT_SCOPES_CLAIM = 'scope';

  /** `jwt`: least time between two JWKS fetches caused by unknown `kid`s, so forged tokens cannot make the service hammer the identity provider. */
  @Type(() => Number)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  AUTH_JWT_JWKS_COOLDOWN_MS = 30_000;

  /** Requests per second one client may make to the API (probes and metrics are not counted), across the cluster's processes, and across replicas when `REDIS_URL` is set; past it: 429 `RATE_LIMITED`. `0`: no limit. */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  QUOTA_REQUESTS_PER_SECOND = 0;

  /** Tasks one client may have running or queued at once (`POST /api/tasks/:name`, `POST /api/compute`), across the cluster's processes, and across replicas when `REDIS_URL` is set; past it: 429 `RATE_LIMITED`. `0`: no limit. */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  QUOTA_TASKS_IN_FLIGHT = 0;

  /** Worker threads asynchronous jobs may hold at once, so a batch of jobs never takes the whole pool from synchronous callers. `auto`: all threads but one, at least 1. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('JOBS_MAX_THREADS'))
  @Min(1)
  @Max(1024)
  @IsInt({ message: 'JOBS_MAX_THREADS must be `auto` or a whole number' })
  JOBS_MAX_THREADS: number | 'auto' = 'auto';

  /** V8 heap cap per thread (MB); a task that exhausts it gets 500 `WORKER_OUT_OF_MEMORY` and its thread is replaced. `auto`: half of the thread's `WORKER_MAX_MEMORY_MB` share of the usable memory (the container's limit, else the machine's), at most 1024, so that a runaway task fails within seconds (docs/adr/0044-memory-defaults-from-the-container.md). */
  @autoOrNumber()
  @ValidateIf(isNotAuto('WORKER_MAX_OLD_GENERATION_MB'))
  @Min(16)
  @Max(65_536)
  @IsInt({ message: 'WORKER_MAX_OLD_GENERATION_MB must be `auto` or a whole number' })
  WORKER_MAX_OLD_GENERATION_MB: number | 'auto' = 'auto';

  /** Recycle a thread after about this many tasks (each thread draws its share within ±20 %, so threads do not all recycle at once); its replacement is started first and the old thread retires only once the new one has loaded its code. `0` never does. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  WORKER_MAX_TASKS = 0;

  /** Recycle a thread, as for `WORKER_MAX_TASKS`, when its V8 heap in use after a task exceeds this many MB: slow growth is shed before the heap cap fails a task. `auto`: 75 % of `WORKER_MAX_OLD_GENERATION_MB`; `0` never. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('WORKER_RECYCLE_HEAP_MB'))
  @Min(0)
  @Max(65_536)
  @IsInt({ message: 'WORKER_RECYCLE_HEAP_MB must be `auto` or a whole number' })
  WORKER_RECYCLE_HEAP_MB: number | 'auto' = 'auto';

  /** Memory one thread may use while it runs a task, V8 heap and external memory (buffers, typed arrays) together, sampled every 50 ms; a task over it is stopped with 500 `WORKER_OUT_OF_MEMORY` and its thread replaced. `auto`: 75 % of the usable memory (the container's cgroup limit, else the machine's) shared by every thread of every process, between 64 and 2048; `0`: not watched. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('WORKER_MAX_MEMORY_MB'))
  @Min(0)
  @Max(1_048_576)
  @IsInt({ message: 'WORKER_MAX_MEMORY_MB must be `auto` or a whole number' })
  WORKER_MAX_MEMORY_MB: number | 'auto' = 'auto';

  /** How long a cancelled task (deadline, client gone, job cancelled, shutdown) has to notice and return before its thread is terminated. `0`: terminate at once. */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  CANCEL_GRACE_MS = 300;

  /** Added to the threads' nice value with their first task, once they have started, so the event loop wins the CPU. Linux only; elsewhere ignored with a warning. */
  @Type(() => Number)
  @Min(0)
  @Max(19)
  @IsInt()
  WORKER_NICE_INCREMENT = 19;

  /** JSON body limit; past it: 413 `PAYLOAD_TOO_LARGE`. */
  @Type(() => Number)
  @Min(1024)
  @Max(1_073_741_824)
  @IsInt()
  BODY_LIMIT_BYTES = 1_048_576;

  /**
   * Most strings (object keys included), arrays and objects a JSON body may hold, at any
   * depth, counted on its bytes before it is parsed; past it: 400 `VALIDATION_FAILED`,
   * unparsed. Numbers are not counted. What JSON.parse costs the event loop follows these
   * (docs/adr/0009-linear-input-checks.md); task inputs have a handful, a matrix one array a row.
   */
  @Type(() => Number)
  @Min(1)
  @Max(10_000_000)
  @IsInt()
  BODY_MAX_JSON_NODES = 10_000;

  /** Raw body limit for binary tasks. */
  @Type(() => Number)
  @Min(1024)
  @Max(1_073_741_824)
  @IsInt()
  BINARY_BODY_LIMIT_BYTES = 67_108_864;

  /** Bytes of request bodies a process holds at once (being received, queued or on a thread); a body that would pass it gets 503 `POOL_SATURATED` (reason `memory`) at once, from its `Content-Length` or as soon as a chunked body crosses it. `auto`: a quarter of the memory the process may use (the container's limit, else the machine's, shared among `CLUSTER_PROCESSES`), at most 256 MiB, and at least `BINARY_BODY_LIMIT_BYTES`. An explicit value must be at least `BINARY_BODY_LIMIT_BYTES`. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('BODY_MEMORY_BUDGET_BYTES'))
  @Min(1024)
  @Max(1_099_511_627_776)
  @IsInt({ message: 'BODY_MEMORY_BUDGET_BYTES must be `auto` or a whole number' })
  BODY_MEMORY_BUDGET_BYTES: number | 'auto' = 'auto';

  /** Time to receive a request's headers; a slower client (slowloris, or a connection that says nothing) gets 408 `REQUEST_TIMEOUT` and is closed. */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  /** Time to receive a whole request, body included (a 64 MiB body needs ~9 Mbit/s); past it: 408 `REQUEST_TIMEOUT`. At least `HTTP_HEADERS_TIMEOUT_MS`. */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_REQUEST_TIMEOUT_MS = 60_000;

  /** An idle keep-alive connection is closed after this; longer than the 60 s idle timeout of common load balancers, so they close first and never reuse a closed connection. */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000;

  /** A connection with a request in flight and no traffic either way for this long (e.g. a client that stops reading its response) is closed; checked every second. Idle keep-alive connections follow `HTTP_KEEP_ALIVE_TIMEOUT_MS`, silent new ones `HTTP_HEADERS_TIMEOUT_MS`. `auto`: the longer of `TASK_TIMEOUT_MS` and `HTTP_REQUEST_TIMEOUT_MS`, plus 10 s. An explicit value must be `0` (never) or longer than `TASK_TIMEOUT_MS`, since a connection is silent while its task runs. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('HTTP_CONNECTION_TIMEOUT_MS'))
  @Min(0)
  @Max(86_400_000)
  @IsInt({ message: 'HTTP_CONNECTION_TIMEOUT_MS must be `auto` or a whole number' })
  HTTP_CONNECTION_TIMEOUT_MS: number | 'auto' = 'auto';

  /** A keep-alive connection carries at most this many requests; the last response says `Connection: close`, so the client reconnects and may land on another process. `0`: no limit. */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  HTTP_MAX_REQUESTS_PER_CONNECTION = 0;

  /** Once a keep-alive connection is older than this, its next response says `Connection: close`, so long-lived connections spread again over the processes (after a respawn, say). `0`: no limit. */
  @Type(() => Number)
  @Min(0)
  @Max(86_400_000)
  @IsInt()
  HTTP_MAX_CONNECTION_AGE_MS = 5_000;

  /** `off` (the default): a busy pool never fails readiness, since every replica behind one load balancer saturates together and failing them all empties the Service (docs/adr/0043-readiness-means-can-serve.md); admission answers the excess with 503 `POOL_SATURATED` and the autoscaler adds replicas. A share of `POOL_MAX_QUEUE`: readiness also fails when the queue is this full, and recovers when it is down to half of that, for load balancers that send a removed replica's traffic to replicas with room. */
  @offOrNumber()
  @ValidateIf(isNotOff('READY_QUEUE_HIGH_WATER'))
  @Min(0.05)
  @Max(1)
  @IsNumber(
    { allowNaN: false, allowInfinity: false },
    { message: 'READY_QUEUE_HIGH_WATER must be `off` or a number' },
  )
  READY_QUEUE_HIGH_WATER: number | 'off' = 'off';

  /** Readiness fails while tasks wait and none has started on a thread for this long: a wedged pool (threads stuck in tasks that ignore their deadline). `auto`: `TASK_TIMEOUT_MS` + `CANCEL_GRACE_MS` + 10 s, so threads that all run to their deadline are not taken for wedged. `0`: never. */
  @autoOrNumber()
  @ValidateIf(isNotAuto('READY_PROGRESS_TIMEOUT_MS'))
  @Min(0)
  @Max(86_400_000)
  @IsInt({ message: 'READY_PROGRESS_TIMEOUT_MS must be `auto` or a whole number' })
  READY_PROGRESS_TIMEOUT_MS: number | 'auto' = 'auto';

  /** Readiness fails past this event-loop delay (p99 over the last second): every request on the process waits that long before its first line of code runs. */
  @Type(() => Number)
  @Min(1)
  @IsInt()
  READY_MAX_EVENT_LOOP_DELAY_MS = 200;

  /** On SIGTERM, keep serving (readiness failing) this long before closing the listener. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  SHUTDOWN_DELAY_MS = 0;

  /** Drain budget after `SHUTDOWN_DELAY_MS`; past it, what is left is cancelled and the exit code is `3`. */
  @Type(() => Number)
  @Min(100)
  @IsInt()
  SHUTDOWN_TIMEOUT_MS = 25_000;

  /** pino level. */
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** Set: jobs use BullMQ on this Redis. Unset: the SQLite store at `JOBS_SQLITE_PATH`, shared by the processes of this machine. */
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** BullMQ key prefix: replicas that share a prefix (and a Redis) share one queue. */
  @Matches(/^[\w.:-]{1,64}$/, {
    message: 'JOBS_QUEUE_PREFIX must be 1-64 letters, digits, . : _ -',
  })
  JOBS_QUEUE_PREFIX = 'corepool';

  /** Runs per job (BullMQ): retries after a crash or a saturated pool, and takeovers of a killed replica's job. */
  @Type(() => Number)
  @Min(1)
  @Max(100)
  @IsInt()
  JOBS_ATTEMPTS = 3;

  /** First retry delay, doubling each time. */
  @Type(() => Number)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  JOBS_BACKOFF_MS = 1000;

  /** Finished jobs (result or error) are kept this long. */
  @Type(() => Number)
  @Min(1)
  @Max(30 * 86_400)
  @IsInt()
  JOBS_RESULT_TTL_SECONDS = 3600;

  /** BullMQ lock per running job; a replica silent this long (killed) has its job taken over. */
  @Type(() => Number)
  @Min(1000)
  @Max(600_000)
  @IsInt()
  JOBS_LOCK_DURATION_MS = 30_000;

  /** SQLite job store (without `REDIS_URL`): its file, relative to the working directory. Every process of the service opens the same file; the Dockerfile and the Kubernetes manifests mount a volume at `data/`. */
  @IsString()
  @Matches(/\S/, { message: 'JOBS_SQLITE_PATH must name a file' })
  JOBS_SQLITE_PATH = 'data/jobs.sqlite';

  /** SQLite job store: how often each process checks that the file it writes is still the one at `JOBS_SQLITE_PATH` (same device and inode) and readable and writable by its mode bits (one `stat` per interval). A file deleted, moved, replaced or made read-only stops submissions (503 `QUEUE_UNAVAILABLE`) and readiness within this time (docs/jobs.md). */
  @Type(() => Number)
  @Min(100)
  @Max(60_000)
  @IsInt()
  JOBS_SQLITE_CHECK_INTERVAL_MS = 1000;

  /** SQLite job store: how often each process looks for jobs to claim, renews its leases and reads cancel requests. A process's own submissions are claimed at once. */
  @Type(() => Number)
  @Min(10)
  @Max(60_000)
  @IsInt()
  JOBS_POLL_INTERVAL_MS = 200;

  /** SQLite job store: how often expired jobs are purged (in small batches), free pages returned and the WAL truncated. */
  @Type(() => Number)
  @Min(1000)
  @Max(86_400_000)
  @IsInt()
  JOBS_PURGE_INTERVAL_MS = 60_000;

  /** `GET /api/jobs/:id/events`: a comment line this often keeps proxies from closing a quiet stream. */
  @Type(() => Number)
  @Min(1000)
  @Max(300_000)
  @IsInt()
  JOBS_EVENTS_HEARTBEAT_MS = 15_000;

  /** `GET /api/jobs/:id/events`: streams one client may hold open on one process; past it: 429 `RATE_LIMITED`. The client is its key, token or quota key (its address without authentication). */
  @Type(() => Number)
  @Min(1)
  @Max(100_000)
  @IsInt()
  JOBS_EVENTS_MAX_STREAMS_PER_CLIENT = 16;

  /** `GET /api/jobs/:id/events`: streams one process holds open at most, all clients together; past it: 429 `RATE_LIMITED`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  JOBS_EVENTS_MAX_STREAMS = 1_000;

  /** Jobs kept at most, on either backend. Finished ones make room; when this many are queued or running, a new job gets 503 `JOB_QUEUE_FULL`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  JOBS_MAX_STORED = 10_000;

  /** Bytes of stored jobs at most (inputs, bodies and results), on either backend, counted as the store holds them: a binary body on Redis as base64 (4/3 of its bytes); past it a new job gets 503 `JOB_QUEUE_FULL`. Redis needs room for this plus BullMQ's own records of each job and of finished ones. */
  @Type(() => Number)
  @Min(1_048_576)
  @Max(1_099_511_627_776)
  @IsInt()
  JOBS_MAX_STORED_BYTES = 1_073_741_824;

  /** Largest stored result of a job (as JSON); a larger one fails the job with `TASK_FAILED`. */
  @Type(() => Number)
  @Min(1024)
  @Max(268_435_456)
  @IsInt()
  JOBS_MAX_RESULT_BYTES = 16_777_216;

  /** Raw body limit of a binary job (it waits in SQLite or Redis until it runs). */
  @Type(() => Number)
  @Min(1024)
  @Max(268_435_456)
  @IsInt()
  JOBS_MAX_BODY_BYTES = 16_777_216;

  /** 32 bytes (64 hex digits or base64): jobs submitted with `encrypt` store and return their result AES-256-GCM encrypted. */
  @IsOptional()
  @Matches(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
    message: 'RESULT_ENCRYPTION_KEY must be 32 bytes, as 64 hex digits or 44 base64 characters',
  })
  RESULT_ENCRYPTION_KEY?: string;

  /** Extra task modules, comma-separated paths, loaded next to the built-in tasks in the main thread and every worker thread (see docs/tasks.md). */
  @IsOptional()
  @IsString()
  TASK_MODULES?: string;

  /** OpenTelemetry (docs/observability.md): the OTLP base endpoint, e.g. `http://collector:4318` (HTTP) or `http://collector:4317` (gRPC); the HTTP protocols append `/v1/traces`, gRPC uses it as it is. Set it or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` to turn tracing on; neither set: no tracing at all — the SDK is not even loaded. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** OpenTelemetry: the endpoint of traces alone, used exactly as written (no path appended); takes precedence over `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  /** OpenTelemetry: how spans are sent: `http/protobuf`, `http/json` or `grpc` (gRPC needs the optional package `@opentelemetry/exporter-trace-otlp-grpc`, see docs/observability.md). */
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

  /** OpenTelemetry: the protocol of traces alone; takes precedence over `OTEL_EXPORTER_OTLP_PROTOCOL`. */
  @IsOptional()
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: OtlpProtocol;

  /** OpenTelemetry: headers sent with every export, `key=value` pairs separated by commas (values percent-encoded), e.g. an authorization token. */
  @IsOptional()
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas',
  })
  OTEL_EXPORTER_OTLP_HEADERS?: string;

  /** OpenTelemetry: headers of trace exports alone; a key set here wins over the same key in `OTEL_EXPORTER_OTLP_HEADERS`. */
  @IsOptional()
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS must be key=value pairs separated by commas',
  })
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string;

  /** OpenTelemetry: longest one export may take, retries included (ms). */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_EXPORTER_OTLP_TIMEOUT = 10_000;

  /** OpenTelemetry: the export timeout of traces alone (ms); takes precedence over `OTEL_EXPORTER_OTLP_TIMEOUT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?: number;

  /** OpenTelemetry: `gzip` compresses every export; `none` sends it as it is. */
  @IsIn(OTLP_COMPRESSIONS)
  OTEL_EXPORTER_OTLP_COMPRESSION: OtlpCompression = 'none';

  /** OpenTelemetry: the compression of traces alone; takes precedence over `OTEL_EXPORTER_OTLP_COMPRESSION`. */
  @IsOptional()
  @IsIn(OTLP_COMPRESSIONS)
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION?: OtlpCompression;

  /** OpenTelemetry: a PEM file of the certificates that verify the collector's TLS certificate; read by the OTLP exporter itself, `OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE` first. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CERTIFICATE?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE?: string;

  /** OpenTelemetry: a PEM file of the client certificate chain for mutual TLS; read by the OTLP exporter itself, `OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE` first. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE?: string;

  /** OpenTelemetry: a PEM file of the client private key for mutual TLS; read by the OTLP exporter itself, `OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY` first. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CLIENT_KEY?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY?: string;

  /** OpenTelemetry: `otlp` exports traces; `none` turns tracing off, as if no endpoint were set. */
  @IsIn(TRACE_EXPORTERS)
  OTEL_TRACES_EXPORTER: TraceExporter = 'otlp';

  /** OpenTelemetry: `true` (any case) turns tracing off even with an endpoint set; any other value reads as false, and a value other than `false` is logged as a warning. */
  @IsOptional()
  @IsString()
  OTEL_SDK_DISABLED?: string;

  /** OpenTelemetry: the `service.name` of every span; takes precedence over a `service.name` in `OTEL_RESOURCE_ATTRIBUTES`. Neither set: `corepool`. */
  @IsOptional()
  @IsString()
  OTEL_SERVICE_NAME?: string;

  /** OpenTelemetry: which traces are kept: `parentbased_always_on` follows the caller's `traceparent` decision and keeps every trace that starts here; `parentbased_traceidratio` keeps `OTEL_TRACES_SAMPLER_ARG` of them; also `always_on`, `always_off`, `traceidratio`, `parentbased_always_off`. Whatever it decides, at most `TRACING_MAX_TRACES_PER_SECOND` traces a second are kept. */
  @IsIn(TRACE_SAMPLERS)
  OTEL_TRACES_SAMPLER: TraceSampler = 'parentbased_always_on';

  /** OpenTelemetry: the share of traces the `*traceidratio` samplers keep, from 0 to 1. */
  @Type(() => Number)
  @Min(0)
  @Max(1)
  @IsNumber()
  OTEL_TRACES_SAMPLER_ARG = 1;

  /** Most traces a process starts or continues a second, whatever the sampler or the callers' `traceparent` flags ask (a token bucket, one second's worth of burst); the rest are not recorded and counted in `compute_tracing_traces_capped_total`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  TRACING_MAX_TRACES_PER_SECOND = 100;

  /** OpenTelemetry: the context formats read from requests and stored with jobs, comma-separated: `tracecontext` (W3C `traceparent`/`tracestate`), `baggage` (W3C `baggage`), or `none`. Other values are ignored with a warning. */
  @IsString()
  OTEL_PROPAGATORS = 'tracecontext,baggage';

  /** OpenTelemetry: the longest a finished span waits in this process before it is sent (ms); a full batch goes at once. */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_BSP_SCHEDULE_DELAY = 5_000;

  /** OpenTelemetry: the longest the batch processor waits for one export (ms). */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_BSP_EXPORT_TIMEOUT = 30_000;

  /** OpenTelemetry: most finished spans a process holds for export, queued or being sent; past it, spans are dropped and counted in `compute_tracing_spans_dropped_total`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  OTEL_BSP_MAX_QUEUE_SIZE = 2_048;

  /** OpenTelemetry: most spans in one export; at most `OTEL_BSP_MAX_QUEUE_SIZE`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE = 512;

  /** OpenTelemetry: longest attribute value (characters), of spans, events and links; unset: no limit. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span, event or link. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_ATTRIBUTE_COUNT_LIMIT = 128;

  /** OpenTelemetry: longest span attribute value; unset: `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT?: number;

  /** OpenTelemetry: most events of a span. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_EVENT_COUNT_LIMIT = 128;

  /** OpenTelemetry: most links of a span. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_LINK_COUNT_LIMIT = 128;

  /** OpenTelemetry: most attributes of a span event; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span link; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_LINK_ATTRIBUTE_COUNT_LIMIT?: number;

  /** OpenTelemetry: extra resource attributes of every span, `key=value` pairs separated by commas (values percent-encoded), e.g. `deployment.environment.name=prod`. */
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas',
  })
  OTEL_RESOURCE_ATTRIBUTES = '';

  /** OpenTelemetry: the level of the SDK's own diagnostics (`none`, `error`, `warn`, `info`, `debug`, `verbose`, `all`, any case), written to the log; export failures are warnings, at most one a minute. */
  @Transform(({ value }) => value.toLowerCase())
  @IsIn(OTEL_LOG_LEVELS)
  OTEL_LOG_LEVEL: OtelLogLevel = 'info';

  /** `production` always logs JSON; otherwise logs are readable on a terminal, JSON elsewhere. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;
}
