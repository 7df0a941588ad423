import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BodyMemoryBudget } from './body-memory-budget';

/** How long the budget must stay empty before the collection: a burst is over, not paused. */
export const QUIET_MS = 1000;

type Collect = (options: { type: 'major'; execution: 'async' }) => void | Promise<void>;

/**
 * V8's own `gc()`, without starting Node with `--expose-gc`: the flag set at
 * run time applies to contexts created after it, such as this one.
 */
export function exposedGc(): Collect {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collect;
}

/**
 * Returns a burst of big bodies' memory once the burst is over. The bodies
 * themselves are gone (moved to threads, or refused), but the chunks they
 * arrived in stay allocated until the event loop's next major collection,
 * and an idle process does not collect: after a burst of large uploads RSS
 * stayed far above its start for good (ADR 0050). When the body budget empties
 * after holding at least half of itself, and stays empty for `QUIET_MS`, one
 * major collection runs, incrementally (`execution: 'async'`), so the event
 * loop is not stopped for it.
 */
export function collectAfterBursts(budget: BodyMemoryBudget, collect: Collect = exposedGc()): void {
  let timer: NodeJS.Timeout | undefined;
  budget.onDrained((peakBytes) => {
    if (peakBytes < budget.limitBytes / 2) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (budget.bytesHeld === 0) void collect({ type: 'major', execution: 'async' });
    }, QUIET_MS);
    timer.unref();
  });
}
