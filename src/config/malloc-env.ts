/**
 * glibc's malloc settings for the HTTP processes the cluster primary forks
 * (glibc reads them once, as a process starts, so the primary is the one
 * place that can set them for its children). With glibc's defaults the
 * 64 KiB chunks a big body arrives in land in up to eight arenas per core and
 * stay there after the body is gone: RSS kept most of a burst of uploads for
 * good. Chunks from 64 KiB up are mapped and unmapped on their own, the few
 * arenas left give their free top back from 128 KiB on, and two arenas are
 * enough for a process whose threads each run one task at a time
 * (docs/adr/0044-memory-defaults-from-the-container.md).
 */
export const MALLOC_DEFAULTS: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_MMAP_THRESHOLD_: '65536',
};

/**
 * The malloc settings to add to a forked process's environment: the defaults
 * an operator has not set. `GLIBC_TUNABLES` naming any malloc tunable is the
 * operator's whole choice, so then nothing is added.
 */
export function mallocEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  if ((env.GLIBC_TUNABLES ?? '').includes('glibc.malloc.')) return {};
  return Object.fromEntries(
    Object.entries(MALLOC_DEFAULTS).filter(([name]) => (env[name] ?? '') === ''),
  );
}
