import { Errors } from '../common/app-error';
import { toProblem } from './problem-details.filter';

describe(toProblem.name, () => {
  it('states the bound an error passed as `limit`', () => {
    const problem = toProblem(
      Errors.payloadTooLarge(1_048_576, 'br level 11 accepts at most 1 MiB'),
    );

    expect(problem).toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
      detail: 'br level 11 accepts at most 1 MiB',
      limit: 1_048_576,
    });
  });

  it('has no `limit` when the error passed no bound', () => {
    expect(toProblem(Errors.shuttingDown())).not.toHaveProperty('limit');
  });
});
