/** Something that can log a warning: Nest's Logger, pino. */
interface Warns {
  warn(message: string): void;
}

/** Redis clients report every failed reconnect; one line per 10 s says enough. */
export const WARNING_INTERVAL_MS = 10_000;

/**
 * A warning that repeats while a dependency is down (Redis reconnecting),
 * logged at most once per interval so an outage does not flood the log.
 */
export class ThrottledWarning {
  private lastAt = -Infinity;

  constructor(
    private readonly logger: Warns,
    private readonly intervalMs = WARNING_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string): void {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) return;
    this.lastAt = now;
    this.logger.warn(message);
  }
}
