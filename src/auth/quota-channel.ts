import {
  isQuotaAnswer,
  QUOTA_ANSWER_TIMEOUT_MS,
  type QuotaAnswer,
  type RateCount,
  type SlotGrant,
} from './quota.protocol';

interface Pending {
  readonly resolve: (answer: QuotaAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A cluster process's line to the primary's quota counters
 * (quota.primary.ts). A question the primary does not answer in time fails,
 * and the caller lets the request through: a stuck primary must not stop the
 * service.
 */
export class QuotaChannel {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly onMessage = (message: unknown) => {
    if (!isQuotaAnswer(message)) return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    clearTimeout(pending.timer);
    pending.resolve(message);
  };

  constructor(private readonly send: (message: object) => void) {
    process.on('message', this.onMessage);
  }

  hit(key: string, windowMs: number): Promise<RateCount> {
    return this.ask({ type: 'corepool:quota:hit', key, windowMs }) as Promise<RateCount>;
  }

  acquire(key: string, max: number): Promise<SlotGrant> {
    return this.ask({ type: 'corepool:quota:acquire', key, max }) as Promise<SlotGrant>;
  }

  release(key: string): void {
    this.send({ type: 'corepool:quota:release', key });
  }

  close(): void {
    process.off('message', this.onMessage);
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    this.pending.clear();
  }

  private ask(question: object): Promise<QuotaAnswer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Error(`the primary did not answer a quota question in ${QUOTA_ANSWER_TIMEOUT_MS} ms`),
        );
      }, QUOTA_ANSWER_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.send({ ...question, id });
    });
  }
}
