import { RespawnPolicy } from './respawn-policy';

const options = { maxDeaths: 4, windowMs: 10_000, baseDelayMs: 100, maxDelayMs: 350 };

describe(RespawnPolicy.name, () => {
  it('respawns with a delay that doubles for each death in the window, up to the cap', () => {
    const policy = new RespawnPolicy(options);
    expect(policy.recordDeath(0)).toEqual({ action: 'respawn', delayMs: 100, recentDeaths: 1 });
    expect(policy.recordDeath(1_000)).toEqual({
      action: 'respawn',
      delayMs: 200,
      recentDeaths: 2,
    });
    expect(policy.recordDeath(2_000)).toEqual({
      action: 'respawn',
      delayMs: 350,
      recentDeaths: 3,
    });
  });

  it('gives up when too many deaths fall within the window', () => {
    const policy = new RespawnPolicy(options);
    for (const at of [0, 100, 200]) expect(policy.recordDeath(at).action).toBe('respawn');
    expect(policy.recordDeath(300)).toEqual({ action: 'give-up', recentDeaths: 4 });
  });

  it('forgets deaths older than the window', () => {
    const policy = new RespawnPolicy(options);
    for (const at of [0, 100, 200]) policy.recordDeath(at);
    expect(policy.recordDeath(10_150)).toEqual({
      action: 'respawn',
      delayMs: 200,
      recentDeaths: 2,
    });
  });
});
