import { AppError } from '../common/app-error';
import { clientDeadlineMs } from './request-deadline';

describe(clientDeadlineMs.name, () => {
  it('is undefined when the client sends no deadline', () => {
    expect(clientDeadlineMs({})).toBeUndefined();
  });

  it("reads corepool's header and Envoy's, and keeps the earlier", () => {
    expect(clientDeadlineMs({ 'x-request-timeout-ms': '1500' })).toBe(1500);
    expect(clientDeadlineMs({ 'x-envoy-expected-rq-timeout-ms': '800' })).toBe(800);
    expect(
      clientDeadlineMs({ 'x-request-timeout-ms': '1500', 'x-envoy-expected-rq-timeout-ms': '800' }),
    ).toBe(800);
  });

  it.each(['soon', '0', '-1', '1.5', '1e3', '', '100000000', ' '])(
    'refuses %j with INVALID_DEADLINE',
    (value) => {
      let thrown: unknown;
      try {
        clientDeadlineMs({ 'x-request-timeout-ms': value });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect(thrown).toMatchObject({ code: 'INVALID_DEADLINE' });
    },
  );

  it('refuses a header sent twice (an array), rather than guessing which one counts', () => {
    expect(() => clientDeadlineMs({ 'x-envoy-expected-rq-timeout-ms': ['100', '200'] })).toThrow(
      AppError,
    );
  });
});
