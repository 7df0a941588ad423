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

describe(`${CostModel.name} with sizes`, () => {
  it('estimates in proportion to the size, from the time per unit it measured', () => {
    const costs = new CostModel(50);
    costs.record('compute', 45, 2_000_000);
    expect(costs.estimate('compute', 2_000_000)).toBeCloseTo(45);
    expect(costs.estimate('compute', 3_000_000)).toBeCloseTo(67.5);
    expect(costs.estimate('compute', 24_000_000)).toBeCloseTo(540);
  });

  it('learns the time per unit per size class, so a task that is not linear is estimated right at both sizes', () => {
    const costs = new CostModel(50);
    costs.record('compute', 58, 2_000_000);
    costs.record('compute', 1872, 24_000_000);
    expect(costs.estimate('compute', 2_000_000)).toBeCloseTo(58);
    expect(costs.estimate('compute', 24_000_000)).toBeCloseTo(1872);
    // Later short runs do not make the long ones look cheap again.
    for (let i = 0; i < 50; i++) costs.record('compute', 58, 2_000_000);
    expect(costs.estimate('compute', 24_000_000)).toBeCloseTo(1872);
  });

  it('interpolates the time per unit of a class never measured between the classes beside it', () => {
    const costs = new CostModel(50);
    costs.record('compute', 1, 1_024); // 2^10: 1/1024 ms per unit
    costs.record('compute', 16, 4_096); // 2^12: 4/1024 ms per unit
    // 2^11 lies halfway: the geometric mean of the two rates, 2/1024 ms per unit.
    expect(costs.estimate('compute', 2_048)).toBeCloseTo(4);
    // Beyond the measured classes, the nearest one's rate.
    expect(costs.estimate('compute', 65_536)).toBeCloseTo(256);
    expect(costs.estimate('compute', 256)).toBeCloseTo(0.25);
  });

  it('estimates an unmeasured task at the prior, whatever its size', () => {
    expect(new CostModel(50).estimate('compute', 24_000_000)).toBe(50);
  });

  it('counts a size below one as one', () => {
    const costs = new CostModel(50);
    costs.record('compute', 2, 0);
    expect(costs.estimate('compute', 0)).toBe(2);
    expect(costs.estimate('compute', Number.NaN)).toBe(2);
  });

  it('raises the time per unit from a large run that was stopped', () => {
    const costs = new CostModel(50);
    costs.record('compute', 10, 1_000);
    costs.recordAtLeast('compute', 5_000, 1_000);
    expect(costs.estimate('compute', 1_000)).toBe(5_000);
  });
});
