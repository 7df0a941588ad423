import { BodyMemoryBudget } from './body-memory-budget';
import { collectAfterBursts, exposedGc, QUIET_MS } from './collect-after-burst';

describe(collectAfterBursts.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function watched() {
    const budget = new BodyMemoryBudget(100);
    const collect = jest.fn();
    collectAfterBursts(budget, collect);
    return { budget, collect };
  }

  it('collects once the budget has emptied after holding half of itself, and stayed empty', () => {
    const { budget, collect } = watched();
    budget.tryReserve(60);
    budget.release(60);
    jest.advanceTimersByTime(QUIET_MS - 1);
    expect(collect).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(collect).toHaveBeenCalledWith({ type: 'major', execution: 'async' });
  });

  it('waits while the burst goes on: bodies arriving again put the collection off', () => {
    const { budget, collect } = watched();
    budget.tryReserve(60);
    budget.release(60);
    jest.advanceTimersByTime(QUIET_MS / 2);
    budget.tryReserve(70);
    jest.advanceTimersByTime(QUIET_MS);
    expect(collect).not.toHaveBeenCalled();
    budget.release(70);
    jest.advanceTimersByTime(QUIET_MS);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('leaves small bodies to the ordinary collections', () => {
    const { budget, collect } = watched();
    budget.tryReserve(49);
    budget.release(49);
    jest.advanceTimersByTime(QUIET_MS * 2);
    expect(collect).not.toHaveBeenCalled();
  });
});

describe(exposedGc.name, () => {
  it("returns V8's collector, callable without --expose-gc on the command line", () => {
    const gc = exposedGc();
    expect(typeof gc).toBe('function');
    expect(() => gc({ type: 'major', execution: 'async' })).not.toThrow();
  });
});
