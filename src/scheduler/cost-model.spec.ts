import { CostModel } from './cost-model';

describe(CostModel.name, () => {
  it('estimates a task never measured at the prior', () => {
    const costs = new CostModel(50);
    expect(costs.estimate('hash')).toBe(50);
    expect(costs.measured('hash')).toBe(false);
  });

  it('takes the first measurement as it is, then follows later ones smoothly', () => {
    const costs = new CostModel(50);
    costs.record('hash', 200);
    expect(costs.estimate('hash')).toBe(200);
    costs.record('hash', 100);
    expect(costs.estimate('hash')).toBeGreaterThan(100);
    expect(costs.estimate('hash')).toBeLessThan(200);
  });

  it('raises the estimate, never lowers it, from a run that was stopped', () => {
    const costs = new CostModel(50);
    costs.record('spin', 100);
    costs.recordAtLeast('spin', 30);
    expect(costs.estimate('spin')).toBe(100);
    costs.recordAtLeast('spin', 5000);
    expect(costs.estimate('spin')).toBe(5000);
  });

  it('keeps its estimates per task', () => {
    const costs = new CostModel(50);
    costs.record('small', 10);
    costs.record('big', 900);
    expect(costs.estimate('small')).toBe(10);
    expect(costs.estimate('big')).toBe(900);
  });
});
