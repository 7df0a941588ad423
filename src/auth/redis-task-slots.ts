import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { TaskSlots } from './task-slots';

/** A process that stops renewing its lease for this long is dead: its slots are freed. */
const LEASE_MS = 10_000;
const RENEW_EVERY_MS = 3_000;

/**
 * Takes one of the client's slots unless `max` are held, counting only the
 * slots of processes whose lease is alive (a crashed replica's slots are
 * dropped here, by whoever asks next).
 * KEYS[1]: the client's slots (a hash: process id → slots held).
 * ARGV: this process's id, max, the lease key prefix.
 */
const ACQUIRE = `
local held = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #held, 2 do
  local owner = held[i]
  if owner ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. owner) == 0 then
    redis.call('HDEL', KEYS[1], owner)
  else
    total = total + tonumber(held[i + 1])
  end
end
if total >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return 1
`;

/** Gives one slot back. KEYS[1]: the client's slots; ARGV[1]: this process's id. */
const RELEASE = `
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`;

/**
 * Tasks in flight counted in Redis, so a client's limit holds across
 * replicas. Each process holds a lease (a key with a TTL it renews); slots of
 * a process whose lease has expired no longer count. When Redis does not
 * answer, the task is let through (`onUnavailable`), as for requests per
 * second.
 */
export class RedisTaskSlots implements TaskSlots {
  private readonly id = randomUUID();
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly max: number,
    private readonly onUnavailable: (error: unknown) => void,
  ) {
    const renew = () =>
      void this.redis
        .set(this.leaseKey, '1', 'PX', LEASE_MS)
        .catch((error: unknown) => this.onUnavailable(error));
    // Also on every (re)connection: a lease missed while Redis was away would free our slots.
    this.redis.on('ready', renew);
    renew();
    this.renewal = setInterval(renew, RENEW_EVERY_MS).unref();
  }

  async acquire(key: string): Promise<boolean> {
    try {
      const granted = await this.redis.eval(
        ACQUIRE,
        1,
        this.slotsKey(key),
        this.id,
        this.max,
        `${this.prefix}lease:`,
      );
      return granted === 1;
    } catch (error) {
      this.onUnavailable(error);
      return true;
    }
  }

  release(key: string): void {
    this.redis
      .eval(RELEASE, 1, this.slotsKey(key), this.id)
      .catch((error: unknown) => this.onUnavailable(error));
  }

  /** Stops renewing and drops the lease: this process's slots stop counting at once. */
  async close(): Promise<void> {
    clearInterval(this.renewal);
    await this.redis.del(this.leaseKey).catch(() => undefined);
  }

  private get leaseKey(): string {
    return `${this.prefix}lease:${this.id}`;
  }

  private slotsKey(key: string): string {
    return `${this.prefix}slots:${key}`;
  }
}
