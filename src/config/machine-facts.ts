import { availableParallelism, totalmem } from 'node:os';
import { cgroupMemoryLimit, usableMemoryBytes } from './memory-limits';

/** What the `auto` values are resolved against: the machine, as this process sees it. */
export interface MachineFacts {
  /** Cores this process may use (`os.availableParallelism()`). */
  readonly cores: number;
  readonly stdoutIsTty: boolean;
  readonly cwd: string;
  /** Memory this process may use: its cgroup limit when there is one, else the machine's. */
  readonly memoryBytes?: number;
}

/** The container's memory limit when there is one, else the machine's (ADR 0044). */
export const usableMemory = (): number =>
  usableMemoryBytes({
    totalBytes: totalmem(),
    constrainedBytes: process.constrainedMemory(),
    cgroupBytes: cgroupMemoryLimit(),
  });

export const currentMachine = (): MachineFacts => ({
  cores: availableParallelism(),
  stdoutIsTty: process.stdout.isTTY === true,
  cwd: process.cwd(),
  memoryBytes: usableMemory(),
});
