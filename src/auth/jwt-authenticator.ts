import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import {
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type { Logger } from 'pino';
import { ThrottledWarning } from '../common/throttled-warning';
import type { AppConfig } from '../config/app-config';
import {
  credentialOf,
  type AuthenticationResult,
  type Authenticator,
  type Rejection,
} from './authenticator';
import { clientIdOf } from './client-id';

type JwtConfig = AppConfig['auth']['jwt'];

/** Time allowed for one JWKS fetch; a slow identity provider must not hold requests long. */
const JWKS_TIMEOUT_MS = 5_000;

/** A token's claims failed after its signature was checked: saying which helps the client and tells a forger nothing. */
const CLAIM_FAILURES: Readonly<Record<string, string>> = {
  ERR_JWT_EXPIRED: 'the token has expired',
  ERR_JWT_CLAIM_VALIDATION_FAILED:
    'the token is not for this service, not yet valid, or lacks a required claim (exp, iat)',
};

const MISSING: Rejection = Object.freeze({ rejected: 'missing' });

/**
 * jose checks `iat` only with a maximum age; without one, a token dated a
 * year ahead (a skewed or forged issuer clock) would pass, so it is checked
 * here with the same tolerance as `nbf`.
 */
function issuedInTheFuture({ iat }: JWTPayload, skewSeconds: number): boolean {
  return typeof iat === 'number' && iat > Date.now() / 1000 + skewSeconds;
}

/**
 * Bearer tokens of an identity provider, verified with `jose`: signature
 * against a JWKS (cached; fetched again when a token names an unknown `kid`,
 * at most once per cooldown) or a local public key, then `iss`, `aud`,
 * `exp` (required unless configured otherwise), `nbf` and `iat` within the
 * clock skew, and the token's age (`iat`) when a maximum is set. The client is one claim
 * (`AUTH_JWT_CLIENT_CLAIM`), its scopes another (`scope` as a
 * space-separated string, or an array such as `scp`).
 */
export class JwtAuthenticator implements Authenticator {
  private readonly key: ReturnType<typeof createRemoteJWKSet> | KeyObject;
  /** Every request fails while the provider is down; one line per 10 s says so. */
  private readonly jwksDown: ThrottledWarning;
  private readonly options: JWTVerifyOptions;

  constructor(
    private readonly config: JwtConfig,
    private readonly defaultScopes: readonly string[],
    log: Logger,
  ) {
    this.jwksDown = new ThrottledWarning(log);
    this.options = {
      issuer: config.issuer,
      audience: config.audience,
      clockTolerance: config.clockSkewSeconds,
      requiredClaims: config.requireExp ? ['exp'] : [],
      // Set, jose also requires `iat` and refuses one in the future.
      maxTokenAge: config.maxTokenAgeSeconds,
    };
    this.key =
      config.jwksUrl !== undefined
        ? createRemoteJWKSet(new URL(config.jwksUrl), {
            cooldownDuration: config.jwksCooldownMs,
            timeoutDuration: JWKS_TIMEOUT_MS,
          })
        : createPublicKey(readFileSync(config.publicKeyFile ?? '', 'utf8'));
  }

  async authenticate(headers: IncomingHttpHeaders): Promise<AuthenticationResult> {
    const token = credentialOf(headers, { apiKeyHeader: false });
    if (token === undefined) return MISSING;
    try {
      // Two calls, not one with a union key: jose types each overload apart.
      const { payload } =
        this.key instanceof Function
          ? await jwtVerify(token, this.key, this.options)
          : await jwtVerify(token, this.key, this.options);
      if (issuedInTheFuture(payload, this.config.clockSkewSeconds)) {
        return { rejected: 'invalid', reason: 'the token is issued in the future' };
      }
      return this.identityOf(payload);
    } catch (error) {
      return this.rejection(error);
    }
  }

  close(): void {}

  private identityOf(payload: JWTPayload): AuthenticationResult {
    const client = payload[this.config.clientClaim];
    if (typeof client !== 'string' || client === '') {
      return { rejected: 'invalid', reason: `the token has no ${this.config.clientClaim} claim` };
    }
    const claimed = payload[this.config.scopesClaim];
    const scopes =
      typeof claimed === 'string'
        ? claimed.split(' ').filter((scope) => scope !== '')
        : Array.isArray(claimed)
          ? claimed.filter((scope): scope is string => typeof scope === 'string')
          : this.defaultScopes;
    return Object.freeze({ id: clientIdOf(client), scopes: new Set(scopes), authenticated: true });
  }

  private rejection(error: unknown): Rejection {
    // The JWKS cannot be fetched or read: the caller is refused, and operators need to know why.
    const unverifiable =
      !(error instanceof errors.JOSEError) ||
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid;
    if (unverifiable) {
      const reason = error instanceof Error ? error.message : String(error);
      this.jwksDown.warn(`the JWKS is not available (${reason}); bearer tokens cannot be verified`);
      return { rejected: 'invalid' };
    }
    const reason = CLAIM_FAILURES[error.code];
    return reason === undefined ? { rejected: 'invalid' } : { rejected: 'invalid', reason };
  }
}
