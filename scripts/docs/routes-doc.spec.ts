import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RequestMethod, type DynamicModule, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import pino from 'pino';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/load-config';

const API_DOC = resolve(__dirname, '..', '..', 'docs', 'api.md');

/** Routes served outside Nest's controllers (Swagger UI and its document). */
const OUTSIDE_NEST = /^GET \/docs/;

type ModuleRef = Type | DynamicModule | Promise<DynamicModule>;

/** Every controller of the module tree, dynamic modules included. */
function controllersOf(ref: ModuleRef, seen = new Set<unknown>()): Type[] {
  if (ref instanceof Promise || seen.has(ref)) return [];
  seen.add(ref);
  const type = 'module' in ref ? ref.module : ref;
  const dynamic: Partial<DynamicModule> = 'module' in ref ? ref : {};
  const imports: ModuleRef[] = [
    ...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, type) as ModuleRef[] | undefined) ?? []),
    ...(dynamic.imports ?? []),
  ].filter((child): child is ModuleRef => child !== undefined && !('forwardRef' in child));
  return [
    ...((Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, type) as Type[] | undefined) ?? []),
    ...(dynamic.controllers ?? []),
    ...imports.flatMap((child) => controllersOf(child, seen)),
  ];
}

const join = (...parts: string[]) =>
  `/${parts
    .flatMap((part) => part.split('/'))
    .filter((part) => part !== '')
    .join('/')}`;

/** `GET /api/tasks/:name` for every handler Nest would register. */
function declaredRoutes(): string[] {
  const root = AppModule.forRoot(loadConfig({}), pino({ enabled: false }));
  return controllersOf(root).flatMap((controller) => {
    const base = (Reflect.getMetadata(PATH_METADATA, controller) as string | undefined) ?? '';
    const prototype = controller.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype)
      .map((key) => prototype[key])
      .filter((handler) => typeof handler === 'function')
      .filter((handler) => Reflect.hasMetadata(METHOD_METADATA, handler as object))
      .map((handler) => {
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string;
        return `${RequestMethod[method]} ${join(base, path)}`;
      });
  });
}

/** The first column of the table under `## Routes`. */
function documentedRoutes(markdown: string): string[] {
  const section = markdown.split(/^## Routes$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\| `([A-Z]+ \/[^`]*)`/gm)].map((match) => match[1] as string);
}

describe('docs/api.md route table', () => {
  const declared = declaredRoutes();
  const documented = documentedRoutes(readFileSync(API_DOC, 'utf8'));

  it('finds the routes of the code', () => {
    expect(declared).toContain('POST /api/tasks/:name');
  });

  it('lists every route the controllers declare', () => {
    expect(declared.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it('lists no route the service does not have', () => {
    const unknown = documented.filter(
      (route) => !declared.includes(route) && !OUTSIDE_NEST.test(route),
    );
    expect(unknown).toEqual([]);
  });
});
