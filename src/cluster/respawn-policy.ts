/** How the primary replaces processes that die on their own. */
export interface RespawnPolicyOptions {
  /**
   * Deaths within `windowMs` that count as a crash loop.
   * @default 5
   */
  readonly maxDeaths: number;
  /**
   * The sliding window in which deaths are counted.
   * @default 60000
   */
  readonly windowMs: number;
  /**
   * Delay before the first respawn; doubled for each further death in the window.
   * @default 100
   */
  readonly baseDelayMs: number;
  /**
   * Upper bound of the respawn delay.
   * @default 5000
   */
  readonly maxDelayMs: number;
}

export const DEFAULT_RESPAWN_POLICY: RespawnPolicyOptions = Object.freeze({
  maxDeaths: 5,
  windowMs: 60_000,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
});

export type RespawnDecision =
  | { readonly action: 'respawn'; readonly delayMs: number; readonly recentDeaths: number }
  | { readonly action: 'give-up'; readonly recentDeaths: number };

/**
 * Decides, for each unexpected death, whether to respawn and after how long.
 * Backoff grows with the deaths in the window, so a process that dies at
 * start is not restarted in a tight loop; once `maxDeaths` fall in one window
 * the answer is to give up, because restarting cannot fix a crash loop.
 */
export class RespawnPolicy {
  private deaths: number[] = [];

  constructor(private readonly options: RespawnPolicyOptions = DEFAULT_RESPAWN_POLICY) {}

  recordDeath(now: number): RespawnDecision {
    this.deaths = this.deaths.filter((at) => now - at < this.options.windowMs);
    this.deaths.push(now);
    const recentDeaths = this.deaths.length;
    if (recentDeaths >= this.options.maxDeaths) return { action: 'give-up', recentDeaths };
    const delayMs = Math.min(
      this.options.maxDelayMs,
      this.options.baseDelayMs * 2 ** (recentDeaths - 1),
    );
    return { action: 'respawn', delayMs, recentDeaths };
  }
}
