import { BodyMemoryBudget } from './body-memory-budget';

describe(BodyMemoryBudget.name, () => {
  it('admits bodies while they fit, refuses and counts the one that does not', () => {
    const budget = new BodyMemoryBudget(100);
    expect(budget.tryReserve(60)).toBe(true);
    expect(budget.tryReserve(40)).toBe(true);
    expect(budget.tryReserve(1)).toBe(false);
    expect({ held: budget.bytesHeld, refusals: budget.refusals }).toEqual({
      held: 100,
      refusals: 1,
    });
  });

  it('admits again once bodies are released', () => {
    const budget = new BodyMemoryBudget(100);
    budget.tryReserve(100);
    budget.release(100);
    expect(budget.tryReserve(100)).toBe(true);
  });

  it('tells its listeners the peak each time it empties', () => {
    const budget = new BodyMemoryBudget(100);
    const peaks: number[] = [];
    budget.onDrained((peak) => peaks.push(peak));
    budget.tryReserve(30);
    budget.tryReserve(50);
    budget.release(50);
    budget.release(30);
    budget.tryReserve(10);
    budget.release(10);
    expect(peaks).toEqual([80, 10]);
  });
});
