/**
 * How often the tasks in flight are sampled: a heavy task lasts a few times
 * this (ADR 0027), so a second's mean sees them come and go, and a sample is
 * one Set's size.
 */
export const PRESSURE_SAMPLE_MS = 100;

/**
 * The mean tasks in flight per thread of this process (running or waiting)
 * between two reports to the primary (ADR 0027). A mean, not the value at
 * the moment of the report: a closed-loop client's task is between two
 * requests for a moment, and a burst is over before the next report.
 */
export class TaskPressure {
  private sum = 0;
  private samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly tasksPerThread: () => number) {
    this.timer = setInterval(() => {
      this.sum += this.tasksPerThread();
      this.samples += 1;
    }, PRESSURE_SAMPLE_MS).unref();
  }

  /** The mean since the last call (the value now if no sample was taken since). */
  take(): number {
    const mean = this.samples === 0 ? this.tasksPerThread() : this.sum / this.samples;
    this.sum = 0;
    this.samples = 0;
    return mean;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
