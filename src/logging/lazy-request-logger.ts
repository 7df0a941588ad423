import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino';

type LogMethod = FastifyBaseLogger['info'];
type LogArgs = Parameters<LogMethod>;

/**
 * A request's logger (Fastify's `request.log`, carrying `reqId`) that becomes
 * a pino child only when it must. Fastify makes a child for every request;
 * most requests of a probe or a scrape write no line, and making the child
 * (its bindings serialised) was ~1.3 µs of each (ADR 0023). Most others
 * write one line, with fields (the access line): the parent writes it, the
 * bindings merged into its fields (ADR 0028).
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {
    // Fastify passes the route's level ('' unless the route sets one): a route with a level of
    // its own gets its child at once, so that its level decides what is dropped.
    if (options.level !== undefined && options.level !== '' && options.level !== parent.level) {
      this.made = parent.child(bindings, options);
    }
  }

  get level(): LevelWithSilentOrString {
    return this.logger().level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger().level = level;
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }

  error(...args: LogArgs): void {
    this.write('error', args);
  }

  warn(...args: LogArgs): void {
    this.write('warn', args);
  }

  info(...args: LogArgs): void {
    this.write('info', args);
  }

  debug(...args: LogArgs): void {
    this.write('debug', args);
  }

  trace(...args: LogArgs): void {
    this.write('trace', args);
  }

  silent(): void {
    // Pino's `silent` level writes nothing.
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }

  isLevelEnabled(level: LevelWithSilentOrString): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  private write(level: Level, args: LogArgs): void {
    if (this.made === undefined) {
      // Disabled levels are dropped before the child exists (it has the parent's level).
      if (!this.parent.isLevelEnabled(level)) return;
      // A line with an object (the access line, the one line of most requests) is the
      // parent's line with the bindings first among its fields: the same line, without a
      // child made for it (its bindings serialised, its prototype chain set up).
      const [fields, ...rest] = args;
      if (this.mergesBindings && isPlainFields(fields)) {
        this.parent[level]({ ...this.bindings, ...fields }, ...(rest as [string]));
        return;
      }
    }
    this.logger()[level](...args);
  }

  /** The child would add nothing but its bindings: no serializers or options of its own. */
  private get mergesBindings(): boolean {
    return Object.keys(this.options).every((option) => option === 'level');
  }

  private logger(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }
}

/** A plain object of fields, which pino writes field by field (not an Error, which it serialises). */
function isPlainFields(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !(value instanceof Error);
}

type MakeChild = (bindings: Bindings, options?: ChildLoggerOptions) => FastifyBaseLogger;

/** `logger`, with `child()` replaced. */
function withChild(logger: Logger, child: MakeChild): Logger {
  return Object.create(logger, { child: { value: child } }) as Logger;
}

/** `parent`, whose children are lazy request loggers. */
export function withLazyChildren(parent: Logger): Logger {
  return withChild(
    parent,
    (bindings, options) => new LazyRequestLogger(parent, bindings, options ?? {}),
  );
}

/**
 * The logger Fastify is given (`loggerInstance`): the process's pino logger. Fastify makes
 * one child of it, with its serializers, and each request's logger with that child's
 * `child()`: that one's children are lazy. A custom `childLoggerFactory` would do the same,
 * but Fastify checks every method of what such a factory returns, on every request
 * (~2,500 instructions, ADR 0025).
 */
export function fastifyLogger(root: Logger): Logger {
  return withChild(root, (bindings, options) => withLazyChildren(root.child(bindings, options)));
}
