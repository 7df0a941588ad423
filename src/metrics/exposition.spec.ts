import { formatAccepted } from './exposition';

describe(formatAccepted.name, () => {
  it.each([
    [undefined, 'prometheus'],
    ['*/*', 'prometheus'],
    ['text/plain;version=0.0.4', 'prometheus'],
    ['application/openmetrics-text', 'openmetrics'],
    // Prometheus's default `Accept`.
    [
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
      'openmetrics',
    ],
    ['text/plain, Application/OpenMetrics-Text; q=0.5', 'openmetrics'],
    ['application/openmetrics-text;q=0, text/plain', 'prometheus'],
  ])('answers %s with %s', (accept, format) => {
    expect(formatAccepted(accept)).toBe(format);
  });
});
