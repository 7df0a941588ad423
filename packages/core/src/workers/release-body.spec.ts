import { releaseBody } from './release-body';
import { TRANSFER_THRESHOLD_BYTES } from './transfer';

describe(releaseBody.name, () => {
  const large = () => new Uint8Array(TRANSFER_THRESHOLD_BYTES);

  it('frees a large body of its own once its task has answered', () => {
    const body = large();
    releaseBody(body, { digest: 'x' });
    expect(body.buffer.detached).toBe(true);
    expect(body.byteLength).toBe(0);
  });

  it('keeps a body the answer is a view of: it goes back with the answer', () => {
    const body = large();
    releaseBody(body, body.subarray(10));
    expect(body.buffer.detached).toBe(false);
  });

  it('keeps small bodies, and views that share their buffer with other bytes', () => {
    const small = new Uint8Array(TRANSFER_THRESHOLD_BYTES - 1);
    releaseBody(small, null);
    expect(small.buffer.detached).toBe(false);
    const shared = new Uint8Array(2 * TRANSFER_THRESHOLD_BYTES);
    const view = shared.subarray(0, TRANSFER_THRESHOLD_BYTES);
    releaseBody(view, null);
    expect(shared.buffer.detached).toBe(false);
  });
});
