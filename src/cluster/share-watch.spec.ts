import { ShareWatch } from './share-watch';

const options = { maxShareRatio: 1.4, minAnswers: 20 };
/** A report of `answered` requests and no tasks: the light routes. */
const answers = (answered: number) => ({ answered, tasksPerThread: 0 });

describe(ShareWatch.name, () => {
  it('names the busiest process and the share above the mean it should move', () => {
    const watch = new ShareWatch(options);
    watch.record(1, answers(90));
    watch.record(2, answers(10));
    expect(watch.decide([1, 2])).toEqual({ id: 1, fraction: (90 - 50) / 90, reason: 'answers' });
  });

  it('leaves shares alone while the busiest is within its ratio of the mean', () => {
    const watch = new ShareWatch(options);
    watch.record(1, answers(69));
    watch.record(2, answers(31));
    expect(watch.decide([1, 2])).toBeUndefined();
  });

  it('counts a process that answered nothing, such as a new one', () => {
    const watch = new ShareWatch(options);
    for (const [id, answered] of [
      [1, 40],
      [2, 40],
      [3, 0],
    ] as const)
      watch.record(id, answers(answered));
    expect(watch.decide([1, 2, 3])?.fraction).toBeCloseTo((40 - 80 / 3) / 40);
  });

  it('waits until every serving process has reported, and uses each report once', () => {
    const watch = new ShareWatch(options);
    watch.record(1, answers(90));
    expect(watch.decide([1, 2])).toBeUndefined();
    watch.record(2, answers(10));
    expect(watch.decide([1, 2])).toBeDefined();
    expect(watch.decide([1, 2])).toBeUndefined();
  });

  it('does nothing with too few answers to tell, or a single process', () => {
    const watch = new ShareWatch(options);
    watch.record(1, answers(15));
    watch.record(2, answers(0));
    expect(watch.decide([1, 2])).toBeUndefined();
    watch.record(1, answers(100));
    expect(watch.decide([1])).toBeUndefined();
  });

  it('forgets a process that left', () => {
    const watch = new ShareWatch(options);
    watch.record(1, answers(90));
    watch.record(2, answers(10));
    watch.forget(2);
    expect(watch.decide([1, 3])).toBeUndefined();
  });

  describe('tasks waiting for a thread (ADR 0027)', () => {
    it('moves connections off a process whose tasks wait while another has less work, however few the answers', () => {
      const watch = new ShareWatch(options);
      // Four connections of 40 ms tasks, all on process 1: 12 answers, far below minAnswers.
      watch.record(1, { answered: 12, tasksPerThread: 3.9 });
      watch.record(2, { answered: 0, tasksPerThread: 0 });
      expect(watch.decide([1, 2])).toEqual({
        id: 1,
        fraction: (3.9 - 1.95) / 3.9,
        reason: 'tasks',
      });
    });

    it('leaves a process alone when its tasks do not wait', () => {
      const watch = new ShareWatch(options);
      watch.record(1, { answered: 12, tasksPerThread: 1 });
      watch.record(2, { answered: 0, tasksPerThread: 0 });
      expect(watch.decide([1, 2])).toBeUndefined();
    });

    it('leaves every process alone when all are about as loaded (overload everywhere)', () => {
      const watch = new ShareWatch(options);
      watch.record(1, { answered: 25, tasksPerThread: 60 });
      watch.record(2, { answered: 24, tasksPerThread: 50 });
      expect(watch.decide([1, 2])).toBeUndefined();
    });

    it('leaves a crowd alone: tasks wait everywhere, so no thread is spare however uneven', () => {
      const watch = new ShareWatch(options);
      // 10,000 clients, two thirds on process 1: both threads always busy.
      watch.record(1, { answered: 2500, tasksPerThread: 6600 });
      watch.record(2, { answered: 2500, tasksPerThread: 3300 });
      expect(watch.decide([1, 2])).toBeUndefined();
    });

    it('moves no answers toward a process whose tasks wait too (a crowd arriving)', () => {
      const watch = new ShareWatch(options);
      watch.record(1, { answered: 900, tasksPerThread: 1 });
      watch.record(2, { answered: 0, tasksPerThread: 1 });
      expect(watch.decide([1, 2])).toBeUndefined();
    });

    it('moves tasks to a process with a thread to spare, though most of it is busy', () => {
      const watch = new ShareWatch(options);
      watch.record(1, { answered: 30, tasksPerThread: 4 });
      watch.record(2, { answered: 30, tasksPerThread: 0.9 });
      expect(watch.decide([1, 2])).toMatchObject({ id: 1, reason: 'tasks' });
    });

    it('prefers the tasks to the answers: a light-route process answers more, the task process waits', () => {
      const watch = new ShareWatch(options);
      watch.record(1, { answered: 900, tasksPerThread: 0 });
      watch.record(2, { answered: 20, tasksPerThread: 3 });
      expect(watch.decide([1, 2])).toMatchObject({ id: 2, reason: 'tasks' });
    });
  });
});
