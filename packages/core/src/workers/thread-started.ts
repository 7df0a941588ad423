/**
 * What a thread posts once it has loaded its task code: how long that took
 * from its spawn (`ThreadData.spawnedAt`), for the thread start duration
 * metric.
 */
export interface ThreadStarted {
  readonly threadStartMs: number;
}

export function isThreadStarted(message: unknown): message is ThreadStarted {
  return typeof (message as Partial<ThreadStarted> | null)?.threadStartMs === 'number';
}
