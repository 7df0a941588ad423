import type { FastifyBaseLogger } from 'fastify';
import pino, {
  type Bindings,
  type ChildLoggerOptions,
  type Level,
  type LevelWithSilentOrString,
  type Logger,
} from 'pino';

type LogMethod = FastifyBaseLogger['info'];
type LogArgs = Parameters<LogMethod>;

/**
 * A request's logger (Fastify's `request.log`, carrying `reqId`) that becomes
 * a pino child only when it must. Fastify makes a child for every request;
 * most requests of a probe or a scrape write no line, and making the child
 * (its bindings serialised) cost each of them (ADR 0023). Most others
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

  /**
   * Writes a line whose fields are JSON already (the access line, ADR 0029) as
   * pino writes a line with fields: level, time, the parent's bindings, this
   * request's, the fields, the message. `fields` is called only for an enabled
   * level. False, and nothing written, where pino itself must write the line: a
   * child was made (a route's own level), or the parent formats its lines its
   * own way (see `writesPlainJson`). The line skips pino's diagnostics channel
   * for `asJson`, which nothing here subscribes to.
   */
  writeFields(level: Level, fields: () => string, message: string): boolean {
    if (this.made !== undefined || !this.mergesBindings || !writesPlainJson(this.parent)) {
      return false;
    }
    if (!this.parent.isLevelEnabled(level)) return true;
    const { symbols } = pino;
    const parent = this.parent as unknown as PinoInternals;
    const bindings = JSON.stringify(this.bindings).slice(1, -1);
    parent[symbols.streamSym].write(
      parent[symbols.lsCacheSym][this.parent.levels.values[level] as number] +
        parent[symbols.timeSym]() +
        parent[symbols.chindingsSym] +
        (bindings === '' ? '' : `,${bindings}`) +
        `,${fields()},` +
        `${JSON.stringify(parent[symbols.messageKeySym])}:${JSON.stringify(message)}` +
        parent[symbols.endSym],
    );
    return true;
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

/** What `writeFields` reads of a pino logger: its parts of every line, and what would change them. */
interface PinoInternals {
  readonly [pino.symbols.streamSym]: { write(line: string): unknown; [key: symbol]: unknown };
  readonly [pino.symbols.lsCacheSym]: Record<number, string>;
  readonly [pino.symbols.timeSym]: () => string;
  readonly [pino.symbols.chindingsSym]: string;
  readonly [pino.symbols.messageKeySym]: string;
  readonly [pino.symbols.endSym]: string;
  readonly [pino.symbols.formattersSym]: { readonly log?: unknown };
  readonly [pino.symbols.mixinSym]?: unknown;
  readonly [pino.symbols.stringifiersSym]: object;
  readonly [pino.symbols.nestedKeySym]?: string | null;
  readonly [pino.symbols.hooksSym]: {
    readonly logMethod?: unknown;
    readonly streamWrite?: unknown;
  };
}

/**
 * Whether pino would write a line with fields as `level, time, bindings,
 * fields, message` and nothing else: no log formatter, mixin, redaction,
 * nested key or hooks, and a stream that needs no metadata
 * (pino.multistream's). The process's logger is such a logger (root-logger.ts).
 */
function writesPlainJson(logger: Logger): boolean {
  let plain = plainJsonLoggers.get(logger);
  if (plain === undefined) {
    plain = readsAsPlainJson(logger);
    plainJsonLoggers.set(logger, plain);
  }
  return plain;
}

/**
 * `writesPlainJson`, once per logger: a logger's options are fixed when it is
 * made, and the access line asks on every request.
 */
const plainJsonLoggers = new WeakMap<Logger, boolean>();

function readsAsPlainJson(logger: Logger): boolean {
  const internals = logger as unknown as PinoInternals;
  const hooks = internals[pino.symbols.hooksSym];
  return (
    internals[pino.symbols.formattersSym].log === undefined &&
    !internals[pino.symbols.mixinSym] &&
    Reflect.ownKeys(internals[pino.symbols.stringifiersSym]).length === 0 &&
    !internals[pino.symbols.nestedKeySym] &&
    hooks.logMethod === undefined &&
    hooks.streamWrite === undefined &&
    internals[pino.symbols.streamSym][pino.symbols.needsMetadataGsym] !== true
  );
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
 * (ADR 0025 has the count).
 */
export function fastifyLogger(root: Logger): Logger {
  return withChild(root, (bindings, options) => withLazyChildren(root.child(bindings, options)));
}
