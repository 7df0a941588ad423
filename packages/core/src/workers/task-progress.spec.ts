import {
  progressReporter,
  ProgressRouter,
  PROGRESS_INTERVAL_MS,
  type ProgressMessage,
  type TaskProgress,
} from './task-progress';

describe(progressReporter.name, () => {
  it('sends at most one report per interval, keeps the latest, flushes it at the end and counts what it sent', () => {
    const sent: ProgressMessage[] = [];
    let clock = 1000;
    const { report, end } = progressReporter(
      7,
      (message) => sent.push(message),
      () => clock,
    );
    report(0.1, 'first');
    report(0.2, 'dropped: a newer report replaces it');
    report(0.3, 'latest');
    clock += PROGRESS_INTERVAL_MS;
    report(Number.NaN);
    report(7, 'x'.repeat(500));
    report(0.8, 'pending at the end');
    expect(end()).toBe(3);
    report(0.9, 'after the end: never sent');
    expect(end()).toBe(3);
    expect(sent.map(({ id, progress }) => ({ id, progress }))).toEqual([
      { id: 7, progress: { fraction: 0.1, message: 'first' } },
      { id: 7, progress: { fraction: 1, message: 'x'.repeat(200) } },
      { id: 7, progress: { fraction: 0.8, message: 'pending at the end' } },
    ]);
  });
});

describe(ProgressRouter.name, () => {
  const message = (id: number, fraction: number): ProgressMessage => ({
    type: 'corepool:progress',
    id,
    progress: { fraction },
  });

  it('routes each report to its task, and none after the task finished', async () => {
    const router = new ProgressRouter();
    const first: TaskProgress[] = [];
    const second: TaskProgress[] = [];
    const a = router.follow((progress) => first.push(progress));
    const b = router.follow((progress) => second.push(progress));
    router.deliver(message(a.id, 0.5));
    router.deliver(message(b.id, 0.25));
    await a.finish(1, 10_000);
    router.deliver(message(a.id, 0.9));
    expect(first).toEqual([{ fraction: 0.5 }]);
    expect(second).toEqual([{ fraction: 0.25 }]);
    await b.finish(1, 0);
  });

  it('waits for the reports the answer counted when they arrive after it', async () => {
    const router = new ProgressRouter();
    const reports: TaskProgress[] = [];
    const task = router.follow((progress) => reports.push(progress));
    // As when the answer overtakes the reports: finish() waits for both.
    const finished = task.finish(2, 10_000);
    router.deliver(message(task.id, 0.5));
    setImmediate(() => router.deliver(message(task.id, 1)));
    await finished;
    expect(reports).toEqual([{ fraction: 0.5 }, { fraction: 1 }]);
  });

  it('does not wait past its bound for reports that never come', async () => {
    const router = new ProgressRouter();
    const task = router.follow(() => undefined);
    jest.useFakeTimers();
    try {
      let finished = false;
      const finishing = task.finish(3, 20).then(() => (finished = true));
      await jest.advanceTimersByTimeAsync(19);
      expect(finished).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await finishing;
      expect(finished).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
