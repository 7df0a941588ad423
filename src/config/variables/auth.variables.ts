import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';

/** Who may call; see docs/security.md. */
export const AUTH_MODES = ['none', 'api-key', 'jwt'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** One entry of `TRUST_PROXY`: proxy-addr's preset names, or an address with a prefix length. */
const PROXY = String.raw`(?:loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(?:/\d{1,3})?)`;
/** Empty, or entries separated by commas. */
const TRUSTED_PROXIES = new RegExp(String.raw`^(?:\s*${PROXY}\s*(?:,\s*${PROXY}\s*)*)?$`);

/** Who the caller is, what it may do and how much (docs/security.md). */
export class AuthVariables {
  /**
   * Request header whose value is the caller's fair-share key when authentication does not identify
   * it; absent or not 1-64 letters, digits, `. : _ -`: the one shared key.
   */
  @Matches(/^[a-z0-9-]{1,64}$/, {
    message: 'CLIENT_KEY_HEADER must be a lower-case header name',
  })
  CLIENT_KEY_HEADER = 'x-client-id';

  /**
   * `true`: the value of `CLIENT_KEY_HEADER` is trusted as the caller's quota key when
   * authentication is off (set it only when a gateway in front sets or overwrites the header).
   * `false`: the quota key of an unauthenticated caller is its address (see `TRUST_PROXY`), so a
   * client cannot escape its quota by changing the header.
   */
  @IsIn(['true', 'false'])
  CLIENT_KEY_HEADER_TRUSTED: 'true' | 'false' = 'false';

  /**
   * Proxies whose `X-Forwarded-For` gives the caller's address (for its quota and the access log):
   * comma-separated addresses or CIDR ranges (`10.0.0.0/8`), or `loopback`, `linklocal`,
   * `uniquelocal`. Empty: the connection's own address. Never name addresses clients can reach
   * directly: they could then choose their address.
   */
  @Matches(TRUSTED_PROXIES, {
    message:
      'TRUST_PROXY must be comma-separated addresses, CIDR ranges, ' +
      'loopback, linklocal or uniquelocal',
  })
  TRUST_PROXY = '';

  /**
   * Who may call. `none`: every caller is one anonymous client (a warning is logged when `HOST` is
   * not loopback). `api-key`: keys listed in `AUTH_API_KEYS_FILE`, sent as `x-api-key` or
   * `Authorization: Bearer`. `jwt`: tokens of an identity provider, `Authorization: Bearer`,
   * checked against `AUTH_JWT_JWKS_URL` or `AUTH_JWT_PUBLIC_KEY_FILE` (docs/security.md).
   */
  @IsIn(AUTH_MODES)
  AUTH_MODE: AuthMode = 'none';

  /**
   * `api-key`: a file of `name:sha256hex(key)[:scope,scope]` lines (`#` comments), re-read on
   * SIGHUP and when it changes, so keys rotate without a restart. A line without scopes gets
   * `AUTH_DEFAULT_SCOPES`. `name:revoked` revokes a key, `!no-keys` says the file holds none on
   * purpose; a file without keys and without it, one that ends mid-line, names an unknown scope, or
   * (on reload) drops a key in use without `name:revoked` is refused, and the previous keys stay in
   * use (docs/security.md).
   */
  @IsOptional()
  @IsString()
  AUTH_API_KEYS_FILE?: string;

  /**
   * Scopes of an API key listed without any, and of a token without the scopes claim
   * (space-separated).
   */
  @Matches(/^[\w:.-]+(?: [\w:.-]+)*$/, {
    message: 'AUTH_DEFAULT_SCOPES must be space-separated scope names',
  })
  AUTH_DEFAULT_SCOPES = 'tasks:run jobs:read jobs:write';

  /**
   * `jwt`: the identity provider's JWKS; fetched when first needed, kept for 10 minutes, fetched
   * again when a token names an unknown `kid` (at most once per `AUTH_JWT_JWKS_COOLDOWN_MS`).
   */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'AUTH_JWT_JWKS_URL must be an http(s) URL' })
  AUTH_JWT_JWKS_URL?: string;

  /** `jwt`: a PEM public key (SPKI) that signs the tokens, instead of a JWKS URL. */
  @IsOptional()
  @IsString()
  AUTH_JWT_PUBLIC_KEY_FILE?: string;

  /** `jwt`: the `iss` every token must carry. Required in `jwt` mode. */
  @IsOptional()
  @IsString()
  AUTH_JWT_ISSUER?: string;

  /** `jwt`: the `aud` every token must name (this service). Required in `jwt` mode. */
  @IsOptional()
  @IsString()
  AUTH_JWT_AUDIENCE?: string;

  /** `jwt`: seconds of clock difference tolerated on `exp` and `nbf`. */
  @Type(() => Number)
  @Min(0)
  @Max(600)
  @IsInt()
  AUTH_JWT_CLOCK_SKEW_S = 30;

  /**
   * `jwt`: `true` refuses a token without `exp`: a token that never expires stays valid for as long
   * as its signing key is published.
   */
  @IsIn(['true', 'false'])
  AUTH_JWT_REQUIRE_EXP: 'true' | 'false' = 'true';

  /**
   * `jwt`: a token is refused once this many seconds have passed since its `iat`, which it must
   * then carry, whatever its `exp` says. `0`: no maximum (an `iat` in the future beyond the clock
   * skew is refused either way).
   */
  @Type(() => Number)
  @Min(0)
  @Max(31_536_000)
  @IsInt()
  AUTH_JWT_MAX_TOKEN_AGE_S = 0;

  /**
   * `jwt`: the claim that names the client (its jobs' owner, its fair share, its quota). Not 1-64
   * letters, digits, `. : _ -`: the client id is a hash of it.
   */
  @Matches(/^[\w.:-]{1,64}$/, { message: 'AUTH_JWT_CLIENT_CLAIM must be a claim name' })
  AUTH_JWT_CLIENT_CLAIM = 'sub';

  /**
   * `jwt`: the claim that carries scopes: a space-separated string (`scope`) or an array (`scp`).
   */
  @Matches(/^[\w.:-]{1,64}$/, { message: 'AUTH_JWT_SCOPES_CLAIM must be a claim name' })
  AUTH_JWT_SCOPES_CLAIM = 'scope';

  /**
   * `jwt`: least time between two JWKS fetches caused by unknown `kid`s, so forged tokens cannot
   * make the service hammer the identity provider.
   */
  @Type(() => Number)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  AUTH_JWT_JWKS_COOLDOWN_MS = 30_000;

  /**
   * Requests per second one client may make to the API (probes and metrics are not counted), across
   * the cluster's processes, and across replicas when `REDIS_URL` is set; past it: 429
   * `RATE_LIMITED`. `0`: no limit.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  QUOTA_REQUESTS_PER_SECOND = 0;

  /**
   * Tasks one client may have running or queued at once (`POST /api/tasks/:name`, `POST
   * /api/compute`), across the cluster's processes, and across replicas when `REDIS_URL` is set;
   * past it: 429 `RATE_LIMITED`. `0`: no limit.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  QUOTA_TASKS_IN_FLIGHT = 0;
}
