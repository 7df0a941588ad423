/**
 * Polls `check` until it returns true, every `intervalMs`, for at most
 * `timeoutMs`: tests wait for conditions, never for fixed times.
 */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 30_000, intervalMs = 50 } = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}

/** A promise with its resolve function, to stop a load from the outside. */
export function trigger(): { promise: Promise<void>; fire: () => void } {
  let fire = () => {};
  const promise = new Promise<void>((done) => {
    fire = done;
  });
  return { promise, fire };
}

/** Whether `promise` is still unsettled, asked later: `const waiting = pending(p); … waiting()`. */
export function pending(promise: Promise<unknown>): () => boolean {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  void promise.then(mark, mark);
  return () => !settled;
}
