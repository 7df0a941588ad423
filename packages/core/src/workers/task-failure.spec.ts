import { classifyAnswer, classifyRejection } from './task-failure';

const limits = { taskTimeoutMs: 2_000, maxOldGenerationMb: 64, maxMemoryMb: 512 };
const aborted = () => Object.assign(new Error('aborted'), { name: 'AbortError' });
const timing = { startedAt: 0, runMs: 1, threadId: 1, heapUsedBytes: 0 };

describe(classifyRejection.name, () => {
  it('answers TASK_TIMEOUT, naming the deadline, when the pool aborted for time', () => {
    const failure = classifyRejection(aborted(), 'timeout', limits);
    expect(failure).toMatchObject({ outcome: 'timeout', error: { code: 'TASK_TIMEOUT' } });
    expect(failure.error.facts.limit).toBe(2_000);
  });

  it('answers TASK_CANCELLED when the client went away', () => {
    expect(classifyRejection(aborted(), 'cancelled', limits)).toMatchObject({
      outcome: 'cancelled',
      error: { code: 'TASK_CANCELLED' },
    });
  });

  it('answers SHUTTING_DOWN when the shutdown budget ran out', () => {
    expect(classifyRejection(aborted(), 'shutdown', limits)).toMatchObject({
      outcome: 'cancelled',
      error: { code: 'SHUTTING_DOWN' },
    });
  });

  it('answers WORKER_OUT_OF_MEMORY, naming the heap limit, when a thread ran out of heap', () => {
    const oom = Object.assign(new Error('heap'), { code: 'ERR_WORKER_OUT_OF_MEMORY' });
    const failure = classifyRejection(oom, undefined, limits);
    expect(failure).toMatchObject({
      outcome: 'crashed',
      error: { code: 'WORKER_OUT_OF_MEMORY' },
      unexpected: false,
    });
    expect(failure.error.detail).toContain('64 MB');
  });

  it('answers WORKER_CRASHED, flagged for the log, for any other death', () => {
    expect(classifyRejection(new Error('exit 1'), undefined, limits)).toMatchObject({
      outcome: 'crashed',
      error: { code: 'WORKER_CRASHED' },
      unexpected: true,
    });
  });

  it('treats an abort nobody asked for as a crash', () => {
    expect(classifyRejection(aborted(), undefined, limits).error.code).toBe('WORKER_CRASHED');
  });
});

describe(classifyAnswer.name, () => {
  it('answers TASK_FAILED with the message of a task that threw', () => {
    const failure = classifyAnswer({ ok: false, kind: 'task', message: 'bad sector', ...timing });
    expect(failure).toMatchObject({ outcome: 'failed', error: { code: 'TASK_FAILED' } });
    expect(failure.error.detail).toBe('bad sector');
  });

  it("answers the task's input code, with the property, for unusable input", () => {
    const invalid = classifyAnswer({
      ok: false,
      kind: 'input',
      message: 'not JSON',
      property: 'body[3]',
      ...timing,
    });
    expect(invalid.error.code).toBe('VALIDATION_FAILED');
    expect(invalid.error.facts.errors).toEqual([{ property: 'body[3]', messages: ['not JSON'] }]);
    const damaged = classifyAnswer({
      ok: false,
      kind: 'input',
      message: 'no xref',
      code: 'INVALID_DOCUMENT',
      ...timing,
    });
    expect(damaged.error.code).toBe('INVALID_DOCUMENT');
  });
});
