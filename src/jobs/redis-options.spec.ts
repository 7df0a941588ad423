import { producerOptions, redisOptions } from './redis-options';

describe(redisOptions.name, () => {
  it('reads host, port, credentials, database and TLS from the URL', () => {
    expect(redisOptions('rediss://user:p%40ss@cache.internal:6380/2')).toMatchObject({
      host: 'cache.internal',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 2,
      tls: {},
    });
    const plain = redisOptions('redis://127.0.0.1');
    expect(plain).toMatchObject({ host: '127.0.0.1', port: 6379 });
    expect(plain).not.toHaveProperty('tls');
    expect(plain).not.toHaveProperty('db');
    expect(redisOptions('redis://[::1]:7000').host).toBe('::1');
  });

  it('reconnects forever, at most every 2 s', () => {
    const { retryStrategy } = redisOptions('redis://localhost');
    expect(retryStrategy?.(1)).toBe(200);
    expect(retryStrategy?.(1000)).toBe(2000);
  });

  it('makes the producer fail fast instead of queueing commands while Redis is away', () => {
    expect(producerOptions('redis://localhost')).toMatchObject({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
  });
});
