import type { QuotaChannel } from './quota-channel';

/** The tasks each client has in flight, against `QUOTA_TASKS_IN_FLIGHT`. */
export interface TaskSlots {
  /** Takes one of the client's slots; false when all `max` are taken. */
  acquire(key: string): boolean | Promise<boolean>;
  release(key: string): void;
}

/** One process: the counts live here. */
export class LocalTaskSlots implements TaskSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  acquire(key: string): boolean {
    const count = this.held.get(key) ?? 0;
    if (count >= this.max) return false;
    this.held.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = (this.held.get(key) ?? 0) - 1;
    if (count > 0) this.held.set(key, count);
    else this.held.delete(key);
  }
}

/**
 * A cluster: the primary counts every process's slots. When the primary does
 * not answer, the task is let through (and its release ignored there).
 */
export class ClusterTaskSlots implements TaskSlots {
  constructor(
    private readonly channel: QuotaChannel,
    private readonly max: number,
    private readonly onUnavailable: (error: unknown) => void,
  ) {}

  async acquire(key: string): Promise<boolean> {
    try {
      return (await this.channel.acquire(key, this.max)).granted;
    } catch (error) {
      this.onUnavailable(error);
      return true;
    }
  }

  release(key: string): void {
    this.channel.release(key);
  }
}
