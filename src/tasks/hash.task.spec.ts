import { validateInput } from '@corepool/core/host';
import { hashInput, hashTask, type HashInput } from './hash.task';
import * as shared from '../../test/support/task-input';
import { liveContext } from '../../test/support/task-context';

const abc = new TextEncoder().encode('abc');

function hashOf(algorithm: HashInput['algorithm'], body: Uint8Array | undefined) {
  return hashTask.run({ algorithm }, body, liveContext());
}

const invalidProperties = (plain: object) => shared.invalidProperties(hashInput, plain, 'query');

describe(`${hashTask.name} task`, () => {
  describe('run', () => {
    // Published test vectors for the message "abc".
    it.each([
      ['sha256', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
      [
        'sha512',
        'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a' +
          '2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
      ],
      ['sha3-256', '3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532'],
      [
        'blake2b512',
        'ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1' +
          '7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923',
      ],
    ] as const)('hashes "abc" with %s to the published digest', async (algorithm, digest) => {
      expect(await hashOf(algorithm, abc)).toEqual({ algorithm, bytes: 3, digest });
    });

    it('hashes a missing body like an empty one', async () => {
      const emptySha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

      expect(await hashOf('sha256', undefined)).toEqual({
        algorithm: 'sha256',
        bytes: 0,
        digest: emptySha256,
      });
      expect((await hashOf('sha256', new Uint8Array(0))).digest).toBe(emptySha256);
    });
  });

  describe('input', () => {
    it('defaults to sha256', () => {
      expect(validateInput(hashInput, {}, 'query').algorithm).toBe('sha256');
      expect(invalidProperties({})).toEqual([]);
    });

    it.each([['md5'], ['SHA256'], [['sha256', 'sha512']]])('rejects algorithm=%p', (algorithm) => {
      expect(invalidProperties({ algorithm })).toEqual(['algorithm']);
    });

    it('rejects unknown query parameters', () => {
      expect(invalidProperties({ encoding: 'base64' })).toEqual(['encoding']);
    });
  });
});
