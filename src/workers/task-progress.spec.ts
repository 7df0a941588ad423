import { once } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import {
  portReporter,
  progressChannel,
  PROGRESS_INTERVAL_MS,
  type TaskProgress,
} from './task-progress';

describe(portReporter.name, () => {
  it('sends at most one report per interval, keeps the latest, and flushes it before the end marker', async () => {
    const { port1, port2 } = new MessageChannel();
    const received: unknown[] = [];
    port1.on('message', (message) => received.push(message));
    let clock = 1000;
    const { report, end } = portReporter(port2, () => clock);
    report(0.1, 'first');
    report(0.2, 'dropped: a newer report replaces it');
    report(0.3, 'latest');
    clock += PROGRESS_INTERVAL_MS;
    report(Number.NaN);
    report(7, 'x'.repeat(500));
    end();
    report(0.9, 'after the end: never sent');
    await once(port1, 'close');
    expect(received).toEqual([
      { kind: 'progress', progress: { fraction: 0.1, message: 'first' } },
      { kind: 'progress', progress: { fraction: 1, message: 'x'.repeat(200) } },
      { kind: 'end' },
    ]);
  });

  it('flushes a pending report at the end', async () => {
    const { port1, port2 } = new MessageChannel();
    const received: unknown[] = [];
    port1.on('message', (message) => received.push(message));
    const { report, end } = portReporter(port2, () => 0);
    report(0.5);
    report(0.75, 'pending');
    end();
    await once(port1, 'close');
    expect(received.at(-2)).toEqual({
      kind: 'progress',
      progress: { fraction: 0.75, message: 'pending' },
    });
  });
});

describe(progressChannel.name, () => {
  it('delivers every report up to the end marker before finish() resolves, and none after', async () => {
    const reports: TaskProgress[] = [];
    const channel = progressChannel((progress) => reports.push(progress));
    channel.port.postMessage({ kind: 'progress', progress: { fraction: 0.5 } });
    channel.port.postMessage({ kind: 'progress', progress: { fraction: 1 } });
    channel.port.postMessage({ kind: 'end' });
    channel.port.postMessage({ kind: 'progress', progress: { fraction: 0.9 } });
    // As when the result arrives first: finish() still waits for the end marker.
    await channel.finish(10_000);
    expect(reports).toEqual([{ fraction: 0.5 }, { fraction: 1 }]);
  });

  it('does not wait past its bound for an end marker that never comes', async () => {
    const channel = progressChannel(() => undefined);
    await channel.finish(10);
    channel.port.close();
  });
});
