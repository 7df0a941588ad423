import { DatabaseSync } from 'node:sqlite';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-job-store';
import { storeFilePerTest } from '../../../test/support/sqlite-store-file';
import { GroupCommit } from './group-commit';
import { pending } from '../../../test/support/poll';

const payload = { task: 'factorial', input: { n: 5 }, encrypt: false };
const anyone = { id: 'owner', admin: false };
/** How long another process holds the write lock while a write waits for it. */
const LOCK_HELD_MS = 300;

describe(GroupCommit.name, () => {
  let options: SqliteStoreOptions;
  const files = storeFilePerTest('corepool-writer-');
  const writer = () => new GroupCommit(new SqliteJobStore({ ...options, busyTimeoutMs: 0 }));

  beforeEach(() => {
    options = files();
  });

  it('commits the calls of one turn together; a call that fails undoes only its own writes', async () => {
    const group = writer();
    const reader = new SqliteJobStore(options);
    const calls = [1, 2, 3].map((i) =>
      group.write((store) => store.insert({ ...payload, input: { n: i } }, 'owner', undefined)),
    );
    // The claim runs after the inserts of its group, whatever the order they were asked in.
    const claim = group.write((store) => store.claimRunnable('me', 5, 1000), { last: true });
    // Nothing is visible before the commit, and nothing is answered before it.
    expect(reader.totals().jobs).toBe(0);
    const [first, second, third] = await Promise.allSettled(calls);
    expect(first).toMatchObject({ status: 'fulfilled' });
    expect(second).toMatchObject({ status: 'fulfilled' });
    // maxStored is 2: the third is refused, the first two stay.
    expect(third).toMatchObject({ status: 'rejected', reason: { code: 'JOB_QUEUE_FULL' } });
    expect(await claim).toHaveLength(2);
    expect(reader.totals().jobs).toBe(2);
    const ids = (await claim).map((job) => job.id);
    for (const id of ids) expect(reader.get(id, anyone)).toMatchObject({ status: 'running' });
    await group.close();
    reader.close();
  });

  it('waits for another process holding the write lock without holding the event loop', async () => {
    const group = writer();
    await group.write((store) => store.totals()); // the file and its tables exist
    const other = new DatabaseSync(options.path);
    other.exec('BEGIN IMMEDIATE');
    const inserted = group.write((store) => store.insert(payload, 'owner', undefined));
    const waiting = pending(inserted);
    // The lock stays taken a while; a timer firing meanwhile shows the loop was free. A blocking
    // busy wait would hold the loop until the lock is released, which only this loop can do.
    await new Promise((resolve) => setTimeout(resolve, LOCK_HELD_MS));
    expect(waiting()).toBe(true);
    other.exec('COMMIT');
    const { job } = await inserted;
    expect(job.status).toBe('queued');
    other.close();
    await group.close();
  });

  it('refuses the waiting calls with QUEUE_UNAVAILABLE when the lock stays taken past the busy timeout', async () => {
    const group = writer();
    await group.write((store) => store.totals());
    const other = new DatabaseSync(options.path);
    other.exec('BEGIN IMMEDIATE');
    await expect(
      group.write((store) => store.insert(payload, 'owner', undefined)),
    ).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    other.exec('ROLLBACK');
    // The next group takes the lock again.
    await expect(
      group.write((store) => store.insert(payload, 'owner', undefined)),
    ).resolves.toMatchObject({ created: true });
    other.close();
    await group.close();
    await expect(group.write((store) => store.totals())).rejects.toMatchObject({
      code: 'QUEUE_UNAVAILABLE',
    });
  });
});
