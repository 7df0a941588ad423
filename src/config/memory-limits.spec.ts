import { join } from 'node:path';
import {
  BODY_BUDGET_CEILING_BYTES,
  cgroupMemoryLimit,
  HEAP_CEILING_MB,
  memoryDefaults,
  MEMORY_PEAK_SHARE,
  THREAD_MEMORY_CEILING_MB,
  usableMemoryBytes,
  worstAdmittedBytes,
} from './memory-limits';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const FIXTURES = join(__dirname, '..', '..', 'test', 'fixtures', 'cgroup');
const limitOf = (fixture: string) =>
  cgroupMemoryLimit(
    join(FIXTURES, fixture, 'sys', 'fs', 'cgroup'),
    join(FIXTURES, fixture, 'self-cgroup'),
  );

describe(cgroupMemoryLimit.name, () => {
  it("reads a cgroup v2 container's memory.max", () => {
    expect(limitOf('v2-container')).toBe(GiB);
  });

  it('takes the smallest limit on the way up from a nested cgroup v2 group', () => {
    expect(limitOf('v2-nested')).toBe(2 * GiB);
  });

  it("reads cgroup v1's memory.limit_in_bytes, ignoring its no-limit value", () => {
    expect(limitOf('v1-docker')).toBe(512 * MiB);
  });

  it('finds no limit where there is none, or no cgroup at all', () => {
    expect(limitOf('v2-unlimited')).toBeUndefined();
    expect(limitOf('v1-unlimited')).toBeUndefined();
    expect(limitOf('absent')).toBeUndefined();
  });
});

describe(usableMemoryBytes.name, () => {
  it("is the smallest of the machine's memory and the limits on the process", () => {
    expect(usableMemoryBytes({ totalBytes: 16 * GiB, constrainedBytes: 0, cgroupBytes: GiB })).toBe(
      GiB,
    );
    expect(
      usableMemoryBytes({ totalBytes: 16 * GiB, constrainedBytes: 2 * GiB, cgroupBytes: 4 * GiB }),
    ).toBe(2 * GiB);
    // process.constrainedMemory() reads 2^64 when nothing constrains the process.
    expect(
      usableMemoryBytes({
        totalBytes: 16 * GiB,
        constrainedBytes: 2 ** 64,
        cgroupBytes: undefined,
      }),
    ).toBe(16 * GiB);
  });
});

describe(memoryDefaults.name, () => {
  const shape = { processes: 2, threads: 1, binaryBodyLimitBytes: 64 * MiB };

  it("keeps the worst mix it admits within 85 % of a container's memory, the heap half of each thread's share", () => {
    const settings = memoryDefaults({ ...shape, memoryBytes: 2 * GiB });
    expect(settings).toEqual({ threadMemoryMb: 592, heapCapMb: 296, bodyBudgetBytes: 72_813_117 });
    expect(shape.processes * worstAdmittedBytes(settings, 1)).toBeLessThanOrEqual(
      MEMORY_PEAK_SHARE * 2 * GiB,
    );
    expect(memoryDefaults({ ...shape, threads: 4, memoryBytes: 2 * GiB })).toMatchObject({
      threadMemoryMb: 124,
      heapCapMb: 62,
    });
    // The manifest's pod: 1 GiB, one process of 2 threads.
    const pod = memoryDefaults({ ...shape, processes: 1, threads: 2, memoryBytes: GiB });
    expect(pod).toEqual({ threadMemoryMb: 280, heapCapMb: 140, bodyBudgetBytes: 72_813_117 });
    expect(worstAdmittedBytes(pod, 2)).toBeLessThanOrEqual(MEMORY_PEAK_SHARE * GiB);
  });

  it('holds a large machine to the ceilings', () => {
    expect(memoryDefaults({ ...shape, memoryBytes: 64 * GiB })).toEqual({
      threadMemoryMb: THREAD_MEMORY_CEILING_MB,
      heapCapMb: HEAP_CEILING_MB,
      bodyBudgetBytes: BODY_BUDGET_CEILING_BYTES,
    });
  });

  it('keeps the floors in a tiny container, and room for one binary body', () => {
    expect(memoryDefaults({ ...shape, threads: 8, memoryBytes: 256 * MiB })).toEqual({
      threadMemoryMb: 64,
      heapCapMb: 32,
      bodyBudgetBytes: 64 * MiB,
    });
  });
});
