import { copyFileSync, renameSync, unlinkSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { AppError } from '../../common/app-error';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-job-store';
import { storeFilePerTest } from '../../../test/support/sqlite-store-file';
import type { StoreFileFinding } from './store-file-check';
import { WriterThreadClient } from './writer-thread-client';
import { pending } from '../../../test/support/poll';

const payload = { task: 'factorial', input: { n: 5 }, encrypt: false };
const anyone = { id: 'owner', admin: false };
/** How long another process holds the write lock while a write waits for it. */
const LOCK_HELD_MS = 300;

describe(WriterThreadClient.name, () => {
  let options: SqliteStoreOptions;
  const files = storeFilePerTest('corepool-write-thread-');

  beforeEach(() => {
    options = files();
  });

  it('runs the writes on its thread: results, coded errors and bodies come back', async () => {
    const writes = new WriterThreadClient(options);
    const body = new Uint8Array([1, 2, 3]);
    const inserted = [
      writes.call('insert', [{ ...payload, body }, 'owner', undefined]),
      writes.call('insert', [payload, 'owner', undefined]),
      writes.call('insert', [payload, 'owner', undefined]),
    ];
    const claim = writes.call('claimRunnable', ['me', 5, 1000], { last: true });
    const [first, second, third] = await Promise.allSettled(inserted);
    expect(first).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(second).toMatchObject({ status: 'fulfilled' });
    // maxStored is 2: the code crosses the thread as an AppError.
    expect(third).toMatchObject({ status: 'rejected', reason: { code: 'JOB_QUEUE_FULL' } });
    expect((third as PromiseRejectedResult).reason).toBeInstanceOf(AppError);
    const claimed = await claim;
    expect(claimed).toHaveLength(2);
    expect(claimed.map((job) => job.payload.body && [...job.payload.body])).toContainEqual([
      1, 2, 3,
    ]);
    const reader = new SqliteJobStore(options);
    for (const job of claimed)
      expect(reader.get(job.id, anyone)).toMatchObject({ status: 'running' });
    reader.close();
    await writes.close();
    await expect(writes.call('totals', [])).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
  });

  it('answers a submission before the claim its arrival asked for runs', async () => {
    const writes = new WriterThreadClient(options);
    const order: string[] = [];
    const claim = writes
      .call('claimRunnable', ['me', 1, 1000], { last: true })
      .then(() => order.push('claim'));
    const insert = writes
      .call('insert', [payload, 'owner', undefined])
      .then(() => order.push('insert'));
    await Promise.all([claim, insert]);
    expect(order).toEqual(['insert', 'claim']);
    await writes.close();
  });

  it('waits asleep on its thread while another process holds the lock; the event loop stays free', async () => {
    const writes = new WriterThreadClient(options);
    await writes.call('totals', []); // the file and its tables exist
    const other = new DatabaseSync(options.path);
    other.exec('BEGIN IMMEDIATE');
    const inserted = writes.call('insert', [payload, 'owner', undefined]);
    const waiting = pending(inserted);
    // The lock stays taken a while; a timer firing meanwhile shows the loop was free. A wait on
    // the main thread would hold the loop until the lock is released, which only this loop can do.
    await new Promise((resolve) => setTimeout(resolve, LOCK_HELD_MS));
    expect(waiting()).toBe(true);
    other.exec('COMMIT');
    await expect(inserted).resolves.toMatchObject({ created: true });
    // Held past the busy timeout (2 s): QUEUE_UNAVAILABLE, and the next write goes through.
    other.exec('BEGIN IMMEDIATE');
    await expect(writes.call('insert', [payload, 'owner', undefined])).rejects.toMatchObject({
      code: 'QUEUE_UNAVAILABLE',
    });
    other.exec('ROLLBACK');
    await expect(writes.call('totals', [])).resolves.toMatchObject({ jobs: 1 });
    other.close();
    await writes.close();
  });

  it.each([
    ['deleted', 'missing', (path: string) => unlinkSync(path)],
    [
      'replaced by a copy',
      'replaced',
      (path: string) => {
        copyFileSync(path, `${path}.copy`);
        renameSync(`${path}.copy`, path);
      },
    ],
  ])(
    'refuses the first write after its file was %s, and says so before it answers',
    async (_change, problem, change) => {
      const events: string[] = [];
      const writes = new WriterThreadClient(options, undefined, (finding: StoreFileFinding) =>
        events.push(`lost ${finding.problem}`),
      );
      await expect(writes.call('insert', [payload, 'owner', undefined])).resolves.toMatchObject({
        created: true,
      });
      change(options.path);
      // Committed into the old file, but never acknowledged: the caller hears it is not kept.
      const refused = writes.call('insert', [payload, 'owner', undefined]).then(
        () => events.push('acknowledged'),
        (error: { code: string; message: string }) =>
          events.push(`${error.code}: ${error.message.includes(`SQLite job store ${problem}`)}`),
      );
      await refused;
      expect(events).toEqual([`lost ${problem}`, 'QUEUE_UNAVAILABLE: true']);
      await writes.close();
    },
  );
});
