import { QueueBoundAdmission } from './admission';

const limits = { threads: 2, maxQueue: 4, taskTimeoutMs: 30_000 };

describe(QueueBoundAdmission.name, () => {
  it('admits while the queue is below its bound', () => {
    const admission = new QueueBoundAdmission(limits);
    expect(admission.admit({ queueSize: 0 })).toBeUndefined();
    expect(admission.admit({ queueSize: 3 })).toBeUndefined();
  });

  it('refuses with POOL_SATURATED and a retry estimate when the queue is full', () => {
    const refusal = new QueueBoundAdmission(limits).admit({ queueSize: 4 });
    expect(refusal?.code).toBe('POOL_SATURATED');
    expect(refusal?.facts.retryAfterSeconds).toBe(1);
  });

  it('estimates from measured run times: the queue worked off by every thread', () => {
    const admission = new QueueBoundAdmission(limits);
    admission.observe({ waitMs: 0, runMs: 2_000 });
    // 4 queued × 2 s ÷ 2 threads + 2 s for the task itself.
    expect(admission.retryAfterSeconds(4)).toBe(6);
  });

  it('uses the measured wait when it is longer than the queue suggests', () => {
    const admission = new QueueBoundAdmission(limits);
    admission.observe({ waitMs: 9_000, runMs: 500 });
    expect(admission.retryAfterSeconds(1)).toBe(10);
  });

  it('follows recent measurements smoothly, not only the last one', () => {
    const admission = new QueueBoundAdmission(limits);
    admission.observe({ waitMs: 0, runMs: 1_000 });
    admission.observe({ waitMs: 0, runMs: 11_000 });
    // 1 s + 0.2 × 10 s = 3 s per task.
    expect(admission.retryAfterSeconds(0)).toBe(3);
  });

  it('never estimates past the task timeout', () => {
    const admission = new QueueBoundAdmission({ ...limits, taskTimeoutMs: 5_000 });
    admission.observe({ waitMs: 60_000, runMs: 60_000 });
    expect(admission.retryAfterSeconds(100)).toBe(5);
  });
});
