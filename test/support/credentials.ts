import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';

export const sha256Hex = (key: string) => createHash('sha256').update(key).digest('hex');

/** An API key file as operators write it: `name:sha256hex(key)[:scopes]` lines. */
export class KeyFile {
  readonly dir = mkdtempSync(join(tmpdir(), 'corepool-keys-'));
  readonly path = join(this.dir, 'api-keys');

  constructor(keys: Record<string, { key: string; scopes?: string[] }>) {
    this.write(keys);
  }

  /**
   * Replaced in one rename, as a Kubernetes Secret update does: a reader never sees half a file.
   * `revoked` names keys taken out on purpose (`name:revoked`); no keys at all writes `!no-keys`.
   */
  write(keys: Record<string, { key: string; scopes?: string[] }>, revoked: string[] = []): void {
    this.writeText(`# test keys\n${KeyFile.lines(keys, revoked).join('\n')}\n`);
  }

  /** Any text, as an editor or a broken copy might leave it (still in one rename). */
  writeText(text: string): void {
    const next = `${this.path}.next`;
    writeFileSync(next, text);
    renameSync(next, this.path);
  }

  static lines(keys: Record<string, { key: string; scopes?: string[] }>, revoked: string[] = []) {
    const lines = Object.entries(keys).map(
      ([name, { key, scopes }]) =>
        `${name}:${sha256Hex(key)}${scopes === undefined ? '' : `:${scopes.join(',')}`}`,
    );
    if (lines.length === 0) lines.push('!no-keys');
    return [...lines, ...revoked.map((name) => `${name}:revoked`)];
  }
}

/** A signing key of a test identity provider, with its `kid`. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyPair['privateKey'];
  readonly publicKey: KeyPair['publicKey'];
  readonly publicJwk: JWK;
}

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { kid, privateKey, publicKey, publicJwk };
}

export const ISSUER = 'https://idp.test';
export const AUDIENCE = 'corepool';

/** A token as an identity provider issues it; `claims` override the defaults (exp in 5 min). */
export function token(key: SigningKey, claims: JWTPayload = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'billing',
    scope: 'tasks:run jobs:read',
    iat: now,
    exp: now + 300,
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .sign(key.privateKey);
}

/** A JWKS endpoint on loopback whose keys the test changes, counting how often it is fetched. */
export class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  private readonly server: Server = createServer((_request, response) => {
    this.fetches += 1;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: this.keys }));
  });

  async start(): Promise<string> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/.well-known/jwks.json`;
  }

  stop(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }
}
