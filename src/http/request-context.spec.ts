import type { IncomingMessage } from 'node:http';
import { nextRequestId, requestId } from './request-context';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withHeader = (value?: string) =>
  ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe('request ids', () => {
  it('made ones have the form of a version-4 UUID and never repeat', () => {
    const ids = Array.from({ length: 10_000 }, () => nextRequestId());
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('made ones differ from one process to the next: each draws its own random part', () => {
    // A second copy of the module, with state of its own, stands for another process.
    let other: typeof nextRequestId = nextRequestId;
    jest.isolateModules(() => {
      other = jest.requireActual<{ nextRequestId: typeof nextRequestId }>(
        './request-context',
      ).nextRequestId;
    });
    expect(other).not.toBe(nextRequestId);
    expect(other().slice(0, 24)).not.toBe(nextRequestId().slice(0, 24));
  });

  it('honours a safe incoming id and replaces an unsafe one', () => {
    expect(requestId(withHeader('trace-42.a:b_c'))).toBe('trace-42.a:b_c');
    expect(requestId(withHeader('has space'))).toMatch(UUID_V4);
    expect(requestId(withHeader('x'.repeat(129)))).toMatch(UUID_V4);
    expect(requestId(withHeader())).toMatch(UUID_V4);
  });
});
