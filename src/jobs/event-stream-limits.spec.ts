import { AppError } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { EventStreamLimits } from './event-stream-limits';

describe(EventStreamLimits.name, () => {
  it('refuses a client past its share with RATE_LIMITED, and lets it back in once one closes', () => {
    const limits = new EventStreamLimits(10, 2);
    const first = limits.acquire('a');
    expect(limits.acquire('a')).toBeInstanceOf(Function);
    const refused = limits.acquire('a');
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe(ErrorCode.RATE_LIMITED);
    expect(limits.acquire('b')).toBeInstanceOf(Function);
    (first as () => void)();
    // Twice is once: a stream closed by both its end and its client frees one place.
    (first as () => void)();
    expect(limits.acquire('a')).toBeInstanceOf(Function);
    expect(limits.acquire('a')).toBeInstanceOf(AppError);
  });

  it('refuses everyone once the process holds its total', () => {
    const limits = new EventStreamLimits(2, 2);
    const release = limits.acquire('a') as () => void;
    limits.acquire('b');
    const refused = limits.acquire('c') as AppError;
    expect(refused.message).toMatch(/holds 2 event streams at most/);
    release();
    expect(limits.acquire('c')).toBeInstanceOf(Function);
  });
});
