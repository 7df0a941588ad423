import { chmodSync, mkdtempSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStoreFile, type StoreIdentity } from './sqlite-store-file';
import { checkStoreFile } from './store-file-check';

describe(checkStoreFile.name, () => {
  let dir: string;
  let path: string;
  let identity: StoreIdentity;
  let close: () => void;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-store-check-'));
    path = join(dir, 'jobs.sqlite');
    const opened = openStoreFile(path, { create: true });
    identity = opened.identity;
    close = () => opened.db.close();
  });
  afterEach(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds nothing wrong with the file it opened', () => {
    expect(checkStoreFile(identity)).toBeUndefined();
  });

  it('finds the file missing once it is deleted', () => {
    unlinkSync(path);
    expect(checkStoreFile(identity)).toEqual({
      problem: 'missing',
      message: expect.stringContaining(`no file at ${path}: job store ${identity.storeId}`),
    });
  });

  it('finds the file missing once it is moved, and well again once it is moved back', () => {
    renameSync(path, `${path}.moved`);
    expect(checkStoreFile(identity)?.problem).toBe('missing');
    renameSync(`${path}.moved`, path);
    expect(checkStoreFile(identity)).toBeUndefined();
  });

  it('finds another file at the path replaced, by its inode, whatever its content', () => {
    renameSync(path, `${path}.old`);
    const other = openStoreFile(path, { create: true });
    other.db.close();
    expect(checkStoreFile(identity)).toEqual({
      problem: 'replaced',
      message: expect.stringContaining(`is not job store ${identity.storeId}`),
    });
  });

  it('finds a file made read-only by its mode bits, for root too', () => {
    chmodSync(path, 0o444);
    expect(checkStoreFile(identity, { uid: 0, gids: [] })).toEqual({
      problem: 'read-only',
      message: `job store ${path} was made read-only (mode 0444)`,
    });
  });

  it("reads the bits of the process's class: group, then other", () => {
    chmodSync(path, 0o460);
    const stranger = { uid: 4242, gids: [4242] };
    expect(checkStoreFile(identity, stranger)?.problem).toBe('unreadable');
    chmodSync(path, 0o406);
    expect(checkStoreFile(identity, stranger)).toBeUndefined();
  });
});
