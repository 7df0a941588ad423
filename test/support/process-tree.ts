import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// What a process tree uses, read from /proc (Linux): the bench's memory and CPU figures.

/** `pid` and every process descended from it, from /proc (Linux). */
function familyOf(pid: number): Set<number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name in parentheses may contain spaces; the ppid follows the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  const family = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parents) {
      if (family.has(parent) && !family.has(child)) {
        family.add(child);
        grew = true;
      }
    }
  }
  return family;
}

/** VmRSS of `pid` and every descendant, from /proc (Linux). */
export function sumRssKiB(pid: number): number {
  let total = 0;
  for (const member of familyOf(pid)) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      total += Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
    } catch {
      // exited while we looked
    }
  }
  return total;
}

/** Clock ticks per second of /proc's CPU times (100 on most Linux systems). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * utime + stime of the main thread (its task id is the process id) of `pid` and of every
 * descendant, from /proc/<pid>/task/<pid>/stat (Linux), in microseconds. Worker threads are
 * other tasks of the process and are not counted: this is the event loops' own CPU.
 */
export function sumMainThreadCpuMicros(pid: number): number {
  let ticks = 0;
  for (const member of familyOf(pid)) {
    try {
      const stat = readFileSync(`/proc/${member}/task/${member}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited while we looked
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS;
}
