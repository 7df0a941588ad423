import { readFileSync } from 'node:fs';
import { posix } from 'node:path';

const MiB = 1024 * 1024;

/**
 * Share of the usable memory the worst mix the service admits may reach, as
 * the RSS of its processes: the rest is left for what no budget sees (the
 * kernel's own charges to the container, allocator slack, a sample the memory
 * watch has not taken yet), so that the container's limit is never what stops
 * a request (docs/adr/0044-memory-defaults-from-the-container.md).
 */
export const MEMORY_PEAK_SHARE = 0.85;
/** What a process holds before any request, its idle threads included (Node, Nest, the code). */
export const PROCESS_BASE_MB = 176;
/**
 * What a running thread holds beyond what its budget counts (V8 heap in use and
 * external memory): its young generation and heap pages committed but not in use.
 */
export const THREAD_OVERHEAD_MB = 32;
/**
 * A thread's memory budget never exceeds this, however large the machine: a
 * runaway task is stopped once it holds this much, not once the machine's
 * memory is gone (docs/adr/0044-memory-defaults-from-the-container.md).
 */
export const THREAD_MEMORY_CEILING_MB = 2048;
/** Nor below this: a thread's own code and a small task need it. */
export const THREAD_MEMORY_FLOOR_MB = 64;
/**
 * Share of a thread's budget its V8 heap may take (`WORKER_MAX_OLD_GENERATION_MB=auto`):
 * the rest is its young generation, code and external memory (buffers).
 */
export const AUTO_HEAP_SHARE = 0.5;
/**
 * The heap cap never exceeds this: V8 fails a heap that is full only after
 * collecting it again and again, and the time that takes grows with the heap,
 * so a larger cap makes a runaway task fail in tens of seconds instead of a
 * few (ADR 0044).
 */
export const HEAP_CEILING_MB = 1024;
/** Node refuses a worker heap below this (`resourceLimits.maxOldGenerationSizeMb`). */
export const HEAP_FLOOR_MB = 16;
/**
 * Share of a process's room (its part of the peak, less its base) its request
 * bodies may hold (`BODY_MEMORY_BUDGET_BYTES=auto`); the threads share the rest.
 * A body on a thread is counted twice, in this budget and in its thread's, so
 * the sum holds however the bodies are spread between the queue and the threads.
 */
export const BODY_BUDGET_SHARE = 0.1;
/**
 * A process's body budget never exceeds this: its threads work on one body
 * each, and more bodies held at once only wait, while receiving and copying
 * them takes the event loop from every other request (ADR 0044).
 */
export const BODY_BUDGET_CEILING_BYTES = 256 * MiB;

/**
 * cgroup v1 writes "no limit" as the largest page-aligned 64-bit number;
 * anything this large is no limit either.
 */
const V1_UNLIMITED = 2 ** 62;

/** A file's text, or undefined when it cannot be read (absent, or not ours to read). */
const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The memory limit of this process's cgroup (a container's), in bytes, or
 * undefined when there is none. The limit that binds is the smallest on the
 * way from the process's own cgroup up to the root, so each level is read:
 * cgroup v2's `memory.max` (`max`: none), cgroup v1's
 * `memory.limit_in_bytes`. `/proc/self/cgroup` names the process's cgroup;
 * inside a container's cgroup namespace that is `/`.
 */
export function cgroupMemoryLimit(
  root = '/sys/fs/cgroup',
  selfCgroup = '/proc/self/cgroup',
): number | undefined {
  const limits: number[] = [];
  for (const line of (read(selfCgroup) ?? '').split('\n')) {
    // hierarchy-id:controllers:path; v2 is `0::path`, v1's memory line names `memory`.
    const [id, controllers, path] = splitCgroupLine(line);
    if (path === undefined) continue;
    if (id === '0' && controllers === '') {
      limits.push(...levels(path).flatMap((dir) => limitIn(`${root}${dir}/memory.max`)));
    } else if ((controllers ?? '').split(',').includes('memory')) {
      limits.push(
        ...levels(path).flatMap((dir) => limitIn(`${root}/memory${dir}/memory.limit_in_bytes`)),
      );
    }
  }
  return limits.length === 0 ? undefined : Math.min(...limits);
}

function splitCgroupLine(line: string): [string?, string?, string?] {
  const first = line.indexOf(':');
  const second = line.indexOf(':', first + 1);
  if (first < 0 || second < 0) return [];
  return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1).trim()];
}

/** `/a/b` → `/a/b`, `/a`, `` (the mount's root). */
function levels(path: string): string[] {
  const dirs: string[] = [];
  for (let dir = posix.normalize(path); dir !== '/' && dir !== '.'; dir = posix.dirname(dir)) {
    dirs.push(dir);
  }
  dirs.push('');
  return dirs;
}

function limitIn(file: string): number[] {
  const text = read(file)?.trim();
  if (text === undefined || text === '' || text === 'max') return [];
  const bytes = Number(text);
  return Number.isFinite(bytes) && bytes > 0 && bytes < V1_UNLIMITED ? [bytes] : [];
}

export interface MemorySources {
  /** `os.totalmem()`. */
  readonly totalBytes: number;
  /** `process.constrainedMemory()`: Node's reading of the cgroup; 0 or 2^64 when none. */
  readonly constrainedBytes: number;
  /** `cgroupMemoryLimit()`. */
  readonly cgroupBytes: number | undefined;
}

/** The memory this process may use: the smallest of the machine's and any limit on it. */
export function usableMemoryBytes({
  totalBytes,
  constrainedBytes,
  cgroupBytes,
}: MemorySources): number {
  const limits = [totalBytes, constrainedBytes, cgroupBytes ?? 0].filter(
    (bytes) => bytes > 0 && bytes < V1_UNLIMITED,
  );
  return Math.min(...limits);
}

export interface MemoryShape {
  /** `usableMemoryBytes()`. */
  readonly memoryBytes: number;
  /** HTTP processes (`CLUSTER_PROCESSES`). */
  readonly processes: number;
  /** Worker threads per process (`POOL_THREADS`). */
  readonly threads: number;
  /** `BINARY_BODY_LIMIT_BYTES`: the body budget must hold the largest body a route accepts. */
  readonly binaryBodyLimitBytes: number;
}

export interface MemoryDefaults {
  /** `WORKER_MAX_MEMORY_MB=auto`. */
  readonly threadMemoryMb: number;
  /** `WORKER_MAX_OLD_GENERATION_MB=auto`. */
  readonly heapCapMb: number;
  /** `BODY_MEMORY_BUDGET_BYTES=auto`. */
  readonly bodyBudgetBytes: number;
}

const clamp = (value: number, floor: number, ceiling: number) =>
  Math.min(ceiling, Math.max(floor, Math.floor(value)));

/**
 * The memory settings' `auto` values, from the worst mix a process admits: its
 * base, a full body budget, and every thread at its budget plus what that budget
 * does not count. Each process gets an equal part of MEMORY_PEAK_SHARE of the
 * usable memory; a tenth of what its base leaves goes to bodies (at least the
 * largest body a route accepts), the rest is shared by its threads, each one's heap
 * half of its budget; each within a ceiling, so that a large machine without a
 * container limit does not let one task or one burst take gigabytes (ADR 0044).
 */
export function memoryDefaults({
  memoryBytes,
  processes,
  threads,
  binaryBodyLimitBytes,
}: MemoryShape): MemoryDefaults {
  const roomBytes = (memoryBytes * MEMORY_PEAK_SHARE) / processes - PROCESS_BASE_MB * MiB;
  const bodyBudgetBytes = Math.max(
    binaryBodyLimitBytes,
    clamp(roomBytes * BODY_BUDGET_SHARE, 0, BODY_BUDGET_CEILING_BYTES),
  );
  const threadMemoryMb = clamp(
    (roomBytes - bodyBudgetBytes) / MiB / Math.max(1, threads) - THREAD_OVERHEAD_MB,
    THREAD_MEMORY_FLOOR_MB,
    THREAD_MEMORY_CEILING_MB,
  );
  const heapCapMb = clamp(threadMemoryMb * AUTO_HEAP_SHARE, HEAP_FLOOR_MB, HEAP_CEILING_MB);
  return { threadMemoryMb, heapCapMb, bodyBudgetBytes };
}

/** The peak RSS, in bytes, of the worst mix these settings admit in one process (the model above). */
export function worstAdmittedBytes(settings: MemoryDefaults, threads: number): number {
  return (
    PROCESS_BASE_MB * MiB +
    settings.bodyBudgetBytes +
    threads * (settings.threadMemoryMb + THREAD_OVERHEAD_MB) * MiB
  );
}
