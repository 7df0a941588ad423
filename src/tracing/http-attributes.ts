import type { Attributes } from '@opentelemetry/api';

/**
 * What a server span says of its request, in OpenTelemetry's HTTP semantic
 * conventions (the stable HTTP server span): read only for a sampled request
 * (`request-tracing.ts`), so an unsampled one costs none of it.
 */
export interface ServerRequestFacts {
  readonly method: string;
  readonly route: string;
  /** The request target as received: path and query. */
  readonly url: string;
  /** `http` or `https`, as the client used it (a trusted proxy's `X-Forwarded-Proto`). */
  readonly scheme: string;
  /** The `Host` the client addressed (a trusted proxy's `X-Forwarded-Host`), port included. */
  readonly host: string | undefined;
  /** The client's address (a trusted proxy's `X-Forwarded-For`). */
  readonly clientAddress: string | undefined;
  /** The other end of the connection. */
  readonly peerAddress: string | undefined;
  readonly peerPort: number | undefined;
  /** `1.1`, `2`… */
  readonly httpVersion: string;
  readonly userAgent: string | undefined;
}

/** The methods the conventions know; any other is `_OTHER`, its own name kept apart. */
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** Query parameters whose values the conventions ask to be redacted by default. */
const REDACTED_QUERY = /(^|&)(AWSAccessKeyId|Signature|sig|X-Goog-Signature)=[^&]*/g;

/** `{method} {route}`; a method the conventions do not know reads `HTTP`. */
export const serverSpanName = (method: string, route: string): string =>
  `${KNOWN_METHODS.has(method) ? method : 'HTTP'} ${route}`;

export function serverAttributes(request: ServerRequestFacts): Attributes {
  const { method, url } = request;
  const query = url.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': KNOWN_METHODS.has(method) ? method : '_OTHER',
    'http.route': request.route,
    'url.scheme': request.scheme,
    'url.path': query === -1 ? url : url.slice(0, query),
    'network.protocol.version': request.httpVersion,
  };
  if (!KNOWN_METHODS.has(method)) attributes['http.request.method_original'] = method;
  if (query !== -1) {
    attributes['url.query'] = url.slice(query + 1).replace(REDACTED_QUERY, '$1$2=REDACTED');
  }
  const server = hostAndPort(request.host, request.scheme);
  if (server !== undefined) {
    attributes['server.address'] = server.address;
    attributes['server.port'] = server.port;
  }
  if (request.clientAddress !== undefined) attributes['client.address'] = request.clientAddress;
  if (request.peerAddress !== undefined) attributes['network.peer.address'] = request.peerAddress;
  if (request.peerPort !== undefined) attributes['network.peer.port'] = request.peerPort;
  if (request.userAgent !== undefined) attributes['user_agent.original'] = request.userAgent;
  return attributes;
}

/** `host:port`, `[v6]:port` or a name alone, whose port is then the scheme's. */
function hostAndPort(
  host: string | undefined,
  scheme: string,
): { address: string; port: number } | undefined {
  if (host === undefined || host === '') return undefined;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  if (match === null) return undefined;
  const [, address = '', port] = match;
  return {
    address: address.replace(/^\[(.*)\]$/, '$1'),
    port: port === undefined ? (scheme === 'https' ? 443 : 80) : Number(port),
  };
}
