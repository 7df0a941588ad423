import { Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { ERROR_TABLE, headersOf, httpOf } from './error-table';

describe('error table', () => {
  it('maps every code to a status from 400 up and a title', () => {
    for (const code of Object.values(ErrorCode)) {
      const { status, title } = httpOf(code);
      expect({ code, ok: status >= 400 && status < 600 && title.length > 0 }).toEqual({
        code,
        ok: true,
      });
    }
    expect(Object.keys(ERROR_TABLE).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it("turns the core's retry estimate into Retry-After", () => {
    expect(headersOf(Errors.poolSaturated(7))).toEqual({ 'retry-after': '7' });
    expect(headersOf(Errors.queueUnavailable('down'))).toEqual({ 'retry-after': '5' });
  });

  it('asks a client of a draining process to close its connection', () => {
    expect(headersOf(Errors.shuttingDown())).toEqual({ connection: 'close' });
  });

  it('adds no headers to an error without facts that need them', () => {
    expect(headersOf(Errors.taskFailed('boom'))).toEqual({});
    expect(httpOf(ErrorCode.TASK_CANCELLED).status).toBe(499);
  });

  it('answers a code it does not know (an old stored job) as an internal error', () => {
    expect(httpOf('NO_SUCH_CODE')).toEqual(ERROR_TABLE.INTERNAL_ERROR);
  });
});
