import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ATOMIC_WRITE_BYTES, BufferedStdout, FLUSH_AFTER_MS } from './buffered-stdout';

/** A destination that records each write it is handed. */
function recorder() {
  const writes: string[] = [];
  const out = {
    write: (chunk: string) => writes.push(chunk) > 0,
    flush: (done?: (error?: Error) => void) => done?.(),
  };
  return { writes, stdout: new BufferedStdout(out) };
}

describe('BufferedStdout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('hands lines over together, in order, at the latest FLUSH_AFTER_MS after the first', () => {
    const { writes, stdout } = recorder();
    stdout.write('one\n');
    jest.advanceTimersByTime(FLUSH_AFTER_MS - 1);
    stdout.write('two\n');
    expect(writes).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(writes).toEqual(['one\ntwo\n']);
    stdout.write('three\n');
    jest.advanceTimersByTime(FLUSH_AFTER_MS);
    expect(writes).toEqual(['one\ntwo\n', 'three\n']);
  });

  it('keeps each write within what a pipe writes whole, cutting between lines only, in bytes', () => {
    const { writes, stdout } = recorder();
    // 3 bytes per character: 300 characters are 900 bytes, so 4 lines fit in 4 KiB and 5 do not.
    const line = `${'€'.repeat(300)}\n`;
    for (let index = 0; index < 10; index++) stdout.write(line);
    const long = `${'x'.repeat(ATOMIC_WRITE_BYTES * 2)}\n`;
    stdout.write(long);
    jest.advanceTimersByTime(FLUSH_AFTER_MS);
    expect(writes.map((chunk) => chunk.length / line.length)).toEqual([
      4,
      4,
      2,
      long.length / line.length,
    ]);
    expect(
      writes.slice(0, 3).every((chunk) => Buffer.byteLength(chunk) <= ATOMIC_WRITE_BYTES),
    ).toBe(true);
    expect(writes.at(-1)).toBe(long);
  });

  it('hands the pending lines over at once when flushed', () => {
    const { writes, stdout } = recorder();
    stdout.write('pending\n');
    const done = jest.fn();
    stdout.flush(done);
    expect(writes).toEqual(['pending\n']);
    expect(done).toHaveBeenCalled();
    jest.advanceTimersByTime(FLUSH_AFTER_MS);
    expect(writes).toEqual(['pending\n']);
  });

  it("writes the lines pending when the process exits (a real process's stdout)", () => {
    jest.useRealTimers();
    const script = `
      const pino = require('pino');
      const { bufferedStdout } = require(${JSON.stringify(resolve(__dirname, 'buffered-stdout'))});
      const log = pino({}, bufferedStdout());
      log.info('first');
      log.info('last words');
      process.exit(3);
    `;
    const child = spawnSync(
      process.execPath,
      ['--require', require.resolve('tsx/cjs'), '-e', script],
      {
        encoding: 'utf8',
      },
    );
    expect(child.status).toBe(3);
    const messages = child.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(['first', 'last words']);
  });
});
