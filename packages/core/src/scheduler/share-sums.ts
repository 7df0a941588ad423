/**
 * Sums of `min(total, reach)` over a fixed set of totals, in O(log n) each:
 * what round robin serves of the other keys while one key spends `reach` of
 * its own (each key gives at most its whole backlog).
 */
export class ShareSums {
  private readonly sorted: number[];
  /** `prefix[i]`: the sum of the `i` smallest totals. */
  private readonly prefix: number[];

  constructor(private readonly totals: readonly number[]) {
    this.sorted = [...totals].sort((a, b) => a - b);
    this.prefix = [0];
    for (const total of this.sorted) this.prefix.push((this.prefix.at(-1) as number) + total);
  }

  /** The sum of `min(total, reach)` over every total but the one at `except`. */
  sumOfMinExcept(except: number, reach: number): number {
    const below = this.countBelow(reach);
    const all = (this.prefix[below] as number) + reach * (this.sorted.length - below);
    return all - Math.min(this.totals[except] ?? 0, reach);
  }

  /** How many totals are below `reach`. */
  private countBelow(reach: number): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.sorted[middle] as number) < reach) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
