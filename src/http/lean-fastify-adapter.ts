import type { NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, RawServerDefault } from 'fastify';

type AdapterOptions = ConstructorParameters<typeof FastifyAdapter<RawServerDefault>>[0];

/**
 * The hooks Nest's FastifyAdapter (12.6) adds in its constructor, by kind: one
 * `onRequest` that runs, in turn, Nest middleware's request hook, the 503 of
 * `return503OnClosing`, `app.enableCors()`, `app.useSecurityHeaders()` and
 * `app.enableCsrfProtection()`, the not-found of request targets middleware could not
 * match and custom versioning's errors (12.5 added one hook for each) — and one
 * `onResponse`, Nest middleware's response hook.
 */
export const NEST_ADAPTER_HOOKS = { onRequest: 1, onResponse: 1 } as const;

/** The adapter being constructed: the hooks Nest adds meanwhile, and how to stop dropping them. */
let muting: { readonly added: Record<string, number>; restore: () => void } | undefined;

/**
 * Nest's FastifyAdapter without the per-request hooks it adds for features
 * corepool does not use (ADR 0034, ADR 0046). corepool has no Nest middleware
 * (`skipMiddie`), no CORS, no security headers or CSRF check of Nest's, no
 * versioning, and drains by itself (src/lifecycle/), so each of those hooks is
 * a call that does nothing on every request. Nest adds them to the instance it
 * has just made, before its constructor returns; they are left out as they are added. A Nest
 * that adds other hooks stops the start here rather than losing one silently,
 * and the features that would need the dropped hooks refuse to be turned on.
 */
export class LeanFastifyAdapter extends FastifyAdapter {
  constructor(options: AdapterOptions) {
    const current = { added: {}, restore: () => undefined };
    muting = current;
    try {
      super(options);
    } finally {
      muting = undefined;
      current.restore();
    }
    const expected = JSON.stringify(NEST_ADAPTER_HOOKS);
    if (JSON.stringify(current.added) !== expected) {
      throw new Error(
        `Nest's FastifyAdapter added the hooks ${JSON.stringify(current.added)}, not ${expected}: ` +
          'check src/http/lean-fastify-adapter.ts against this version of @nestjs/platform-fastify',
      );
    }
  }

  /** Nest calls this with the instance it has made, before it adds its hooks. */
  override setInstance<T = FastifyInstance>(made: T): void {
    super.setInstance(made);
    const instance = made as FastifyInstance;
    const current = muting;
    if (current === undefined) return;
    // Kept unbound and put back as it was: a plugin's instance inherits it and calls it with
    // itself as `this`, so that its hooks stay its own.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const addHook = instance.addHook as unknown as (
      this: FastifyInstance,
      name: string,
      hook: unknown,
    ) => FastifyInstance;
    current.restore = () => {
      instance.addHook = addHook;
    };
    const muted = function (this: FastifyInstance, name: string, hook: unknown): FastifyInstance {
      if (!Object.hasOwn(NEST_ADAPTER_HOOKS, name)) return addHook.call(this, name, hook);
      current.added[name] = (current.added[name] ?? 0) + 1;
      return this;
    };
    instance.addHook = muted;
  }

  override enableCors(): void {
    throw new Error('CORS is not wired in (src/http/lean-fastify-adapter.ts drops its hook)');
  }

  override registerSecurityHook(): void {
    throw new Error(
      "Nest's security headers and CSRF check are not wired in (src/http/lean-fastify-adapter.ts drops their hook)",
    );
  }

  /** Nest passes the application's options here; corepool drains by itself (src/lifecycle/). */
  override initHttpServer(options: NestApplicationOptions = {}): void {
    if (options.return503OnClosing === true) {
      throw new Error(
        'return503OnClosing is not wired in (src/http/lean-fastify-adapter.ts drops its hook)',
      );
    }
    super.initHttpServer(options);
  }

  override setOnRequestHook(): void {
    throw new Error('Nest adapter hooks are not wired in (src/http/lean-fastify-adapter.ts)');
  }

  override setOnResponseHook(): void {
    throw new Error('Nest adapter hooks are not wired in (src/http/lean-fastify-adapter.ts)');
  }
}
