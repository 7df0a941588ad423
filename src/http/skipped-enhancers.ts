import type { Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';

/** Nest's metadata key of each enhancer, by the decorator that sets it. */
const ENHANCERS = [
  ['@UseGuards', GUARDS_METADATA],
  ['@UseInterceptors', INTERCEPTORS_METADATA],
  ['@UsePipes', PIPES_METADATA],
  ['@UseFilters', EXCEPTION_FILTERS_METADATA],
] as const;

/** A parameter decorator's entry in Nest's route arguments, as `@Param('x', SomePipe)` writes it. */
interface RouteArgument {
  readonly index: number;
  readonly pipes?: readonly unknown[];
}

/**
 * The Nest enhancers a controller method or its class declares for itself,
 * named as written (`@UseGuards(ApiKeyGuard)`), which Nest's pipeline runs
 * and a route Fastify calls directly would skip. Global ones are not read:
 * corepool registers none but the exception filter, whose answer the direct
 * routes give themselves.
 */
export function skippedEnhancers(controller: Type<unknown>, method: string): string[] {
  const handler: unknown = (controller.prototype as Record<string, unknown>)[method];
  const found: string[] = [];
  for (const [decorator, key] of ENHANCERS) {
    for (const target of [controller, handler]) {
      const enhancers = readList(key, target);
      if (enhancers.length > 0) found.push(`${decorator}(${enhancers.map(nameOf).join(', ')})`);
    }
  }
  const routeArguments = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ??
    {}) as Record<string, RouteArgument>;
  for (const argument of Object.values(routeArguments)) {
    const pipes = argument.pipes ?? [];
    if (pipes.length > 0) {
      found.push(`pipes on parameter ${argument.index} (${pipes.map(nameOf).join(', ')})`);
    }
  }
  return found;
}

function readList(key: string, target: unknown): readonly unknown[] {
  if (typeof target !== 'function') return [];
  const value: unknown = Reflect.getMetadata(key, target);
  return Array.isArray(value) ? value : [];
}

/** A class by its name, an instance by its class's name. */
function nameOf(enhancer: unknown): string {
  if (typeof enhancer === 'function') return enhancer.name || 'anonymous';
  if (typeof enhancer === 'object' && enhancer !== null) return enhancer.constructor.name;
  return String(enhancer);
}
