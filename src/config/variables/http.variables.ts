import { IsInt, IsNumber, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';
import { autoOrNumber, unlessAuto } from './conversions';

/** Request bodies and connection timeouts. */
export class HttpVariables {
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

  /**
   * Time to receive a request's headers; a slower client (slowloris, or a connection that says
   * nothing) gets 408 `REQUEST_TIMEOUT` and is closed.
   */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  /**
   * Time to receive a whole request, body included (a 64 MiB body needs ~9 Mbit/s); past it: 408
   * `REQUEST_TIMEOUT`. At least `HTTP_HEADERS_TIMEOUT_MS`.
   */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_REQUEST_TIMEOUT_MS = 60_000;

  /**
   * An idle keep-alive connection is closed after this; longer than the 60 s idle timeout of common
   * load balancers, so they close first and never reuse a closed connection.
   */
  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000;

  /**
   * A connection with a request in flight and no traffic either way for this long (e.g. a client
   * that stops reading its response) is closed; checked every second. Idle keep-alive connections
   * follow `HTTP_KEEP_ALIVE_TIMEOUT_MS`, silent new ones `HTTP_HEADERS_TIMEOUT_MS`. `auto`: the
   * longer of `TASK_TIMEOUT_MS` and `HTTP_REQUEST_TIMEOUT_MS`, plus 10 s. An explicit value must be
   * `0` (never) or longer than `TASK_TIMEOUT_MS`, since a connection is silent while its task runs.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(86_400_000)
  @IsInt({ message: 'HTTP_CONNECTION_TIMEOUT_MS must be `auto` or a whole number' })
  HTTP_CONNECTION_TIMEOUT_MS: number | 'auto' = 'auto';

  /**
   * A keep-alive connection carries at most this many requests; the last response says `Connection:
   * close`, so the client reconnects and may land on another process. `0`: no limit.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  HTTP_MAX_REQUESTS_PER_CONNECTION = 0;

  /**
   * Once a keep-alive connection is older than this (give or take its own 10 %), its next response
   * says `Connection: close`, so long-lived connections spread again over processes and pods. The
   * primary moves connections itself when one process carries too many (docs/lifecycle.md); every
   * reconnection costs the loop an accept, so a crowd of 10,000 clients pays for this bound
   * (ADR 0057). `0`: no limit.
   */
  @Type(() => Number)
  @Min(0)
  @Max(86_400_000)
  @IsInt()
  HTTP_MAX_CONNECTION_AGE_MS = 60_000;

  /**
   * Connections the kernel keeps waiting to be accepted (`listen(2)`'s backlog, capped by
   * `net.core.somaxconn`). A crowd that connects at once waits there in line; past it the
   * kernel drops connection attempts, which the clients retry only after a second or more,
   * Kubernetes probes included. Node's default is 511 (docs/overload.md).
   */
  @Type(() => Number)
  @Min(1)
  @Max(65_535)
  @IsInt()
  HTTP_LISTEN_BACKLOG = 65_535;

  /**
   * Requests in progress per process (read, not yet answered) past which, while the event loop
   * is saturated (`HTTP_INTAKE_LOOP_UTILIZATION`), a keep-alive connection's next request is left
   * unread in the kernel until its turn: clients wait in line at the socket instead of receiving
   * 503s they would repeat at once (see docs/overload.md). Probes are never held. `auto`: 64 per
   * thread. `0`: never hold.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(0)
  @Max(1_000_000)
  @IsInt({ message: 'HTTP_INTAKE_MAX_IN_PROGRESS must be `auto` or a whole number' })
  HTTP_INTAKE_MAX_IN_PROGRESS: number | 'auto' = 'auto';

  /**
   * The event loop's utilization (the share of each 100 ms it spends running callbacks, 0 to 1)
   * from which it counts as saturated, for `HTTP_INTAKE_MAX_IN_PROGRESS`.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1)
  @IsNumber()
  HTTP_INTAKE_LOOP_UTILIZATION = 0.9;
}
