import { KeyFile } from './support/credentials';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(90_000);

type Json = Record<string, any>;

/**
 * Jobs belong to the client that submitted them, as authentication names it:
 * real API keys, a real 2-process cluster sharing the default SQLite store.
 */
describe('job ownership with API keys across two processes', () => {
  const keys = new KeyFile({
    alice: { key: 'alice-key-5f0a' },
    bob: { key: 'bob-key-c41e' },
    ops: { key: 'ops-key-9b2d', scopes: ['admin'] },
  });
  let service: ServiceProcess;

  const call = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${service.url}${path}`, {
      ...init,
      headers: {
        'x-api-key': key,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });
  const json = async (response: Response) => (await response.json()) as Json;

  beforeAll(async () => {
    service = await startService({
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      AUTH_MODE: 'api-key',
      AUTH_API_KEYS_FILE: keys.path,
    });
  });
  afterAll(() => service.stop());

  it('scopes get, list, events and cancel to the owner; another client gets 404; admin sees all', async () => {
    const submitted = await call('alice-key-5f0a', '/api/jobs', {
      method: 'POST',
      body: JSON.stringify({ task: 'factorial', input: { n: 20 } }),
    });
    const answer = await json(submitted);
    // A refusal's problem body comes with its status, so that the failure says why.
    expect({ http: submitted.status, ...(submitted.status === 202 ? {} : answer) }).toEqual({
      http: 202,
    });
    const { id } = answer;

    // Any process answers the owner (the store is shared): ten reads, ten answers.
    for (let i = 0; i < 10; i++) {
      expect((await call('alice-key-5f0a', `/api/jobs/${id}`)).status).toBe(200);
    }
    const foreign = await call('bob-key-c41e', `/api/jobs/${id}`);
    expect(foreign.status).toBe(404);
    expect(await json(foreign)).toMatchObject({ code: 'JOB_NOT_FOUND' });
    expect((await call('bob-key-c41e', `/api/jobs/${id}/events`)).status).toBe(404);
    expect((await call('bob-key-c41e', `/api/jobs/${id}`, { method: 'DELETE' })).status).toBe(404);

    const ids = async (key: string) =>
      ((await json(await call(key, '/api/jobs'))).items as Json[]).map((job) => job.id);
    expect(await ids('alice-key-5f0a')).toContain(id);
    expect(await ids('bob-key-c41e')).not.toContain(id);
    expect(await ids('ops-key-9b2d')).toContain(id);
    expect((await call('ops-key-9b2d', `/api/jobs/${id}`)).status).toBe(200);

    // Bob's DELETE changed nothing: the job is still Alice's to read.
    const job = await json(await call('alice-key-5f0a', `/api/jobs/${id}`));
    expect(job.status).not.toBe('cancelled');
  });
});
