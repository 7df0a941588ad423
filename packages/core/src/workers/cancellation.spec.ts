import { Cancellation, onCancel } from './cancellation';

describe('Cancellation', () => {
  it('aborts once: the first reason stays, listeners hear it once', () => {
    const cancellation = new Cancellation<string>();
    const heard: string[] = [];
    cancellation.on('abort', () => heard.push(String(cancellation.reason)));
    expect(cancellation.aborted).toBe(false);
    cancellation.abort('timeout');
    cancellation.abort('cancelled');
    expect(cancellation).toMatchObject({ aborted: true, reason: 'timeout' });
    expect(heard).toEqual(['timeout']);
  });
});

describe('onCancel', () => {
  const kinds = [
    {
      kind: 'a Cancellation',
      make: () => {
        const cancellation = new Cancellation();
        return { signal: cancellation, abort: () => cancellation.abort('gone') };
      },
    },
    {
      kind: 'an AbortSignal',
      make: () => {
        const controller = new AbortController();
        return { signal: controller.signal, abort: () => controller.abort('gone') };
      },
    },
  ];

  it.each(kinds)('calls the listener once when $kind aborts', ({ make }) => {
    const { signal, abort } = make();
    const listener = jest.fn();
    onCancel(signal, listener);
    expect(listener).not.toHaveBeenCalled();
    abort();
    abort();
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it.each(kinds)('calls the listener at once when $kind has already aborted', ({ make }) => {
    const { signal, abort } = make();
    abort();
    const listener = jest.fn();
    onCancel(signal, listener);
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it.each(kinds)('stops listening to $kind when unsubscribed', ({ make }) => {
    const { signal, abort } = make();
    const listener = jest.fn();
    const stop = onCancel(signal, listener);
    stop();
    abort();
    expect(listener).not.toHaveBeenCalled();
  });
});
