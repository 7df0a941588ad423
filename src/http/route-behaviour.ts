import { applyDecorators } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiExtension } from '@nestjs/swagger';
import type { FastifyRequest, RouteOptions } from 'fastify';
import type { RouteAccess } from '../auth/scopes';

/**
 * Where a route finds the name of the task whose input its body is. The rest
 * of the query string is the task's options, but for `routeQuery`: the
 * route's own parameters.
 */
export type TaskNameSource =
  { readonly param: string } | { readonly query: string; readonly routeQuery?: readonly string[] };

/**
 * What a route declares about its own HTTP handling, next to its handler,
 * instead of other code matching its URL.
 */
export interface RouteBehaviour {
  /**
   * The body is the input of the task named here. A binary task's body stays
   * raw bytes, within BINARY_BODY_LIMIT_BYTES or the task's own tighter limit;
   * any other body is JSON within BODY_LIMIT_BYTES.
   */
  readonly taskBody?: TaskNameSource;
  /**
   * False for routes machines call every few seconds (probes, scrapes): each
   * access-log line would say the same thing. Default true.
   */
  readonly accessLog?: boolean;
  /**
   * Who may call it when authentication is on: `public` (probes), any
   * authenticated client (the default), or the holder of a scope.
   */
  readonly access?: RouteAccess;
  /**
   * The request runs a task and holds one of its client's
   * `QUOTA_TASKS_IN_FLIGHT` until it is answered. Default false.
   */
  readonly runsTask?: boolean;
  /**
   * An operator's route (metrics, detailed health): when ADMIN_PORT is set it is
   * served there and not on the public port. Default false.
   */
  readonly admin?: boolean;
}

/** A route's behaviour, compiled once when the route is registered. */
export interface RouteProfile {
  /** The route's template (`/api/tasks/:name`), or `unmatched`: never the raw URL. */
  readonly template: string;
  readonly accessLog: boolean;
  readonly access: RouteAccess;
  readonly runsTask: boolean;
  readonly admin: boolean;
  /** The task whose input this request's body is, by name, if the route takes one. */
  readonly taskName: (request: FastifyRequest) => string | undefined;
  /** A binary task's options: the query string without the route's own parameters. */
  readonly taskOptions: (request: FastifyRequest) => Readonly<Record<string, unknown>>;
}

/** Where the behaviour travels in Fastify's per-route `config`. */
const BEHAVIOUR = 'corepool:behaviour';
const PROFILE = 'corepool:profile';

/** The route of requests no route matched: one fixed value, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const noTask = () => undefined;

/** Where the behaviour travels in the OpenAPI operation, until `src/http/openapi.ts` turns it into answers. */
export const BEHAVIOUR_EXTENSION = 'x-corepool-behaviour';

/**
 * Declares a route's HTTP behaviour (Fastify route `config`, read when the route is added);
 * the OpenAPI document derives the route's security and refusals from the same declaration.
 */
export const HttpBehaviour = (behaviour: RouteBehaviour) =>
  applyDecorators(
    RouteConfig({ [BEHAVIOUR]: behaviour }),
    ApiExtension(BEHAVIOUR_EXTENSION, behaviour),
  );

/**
 * Fastify's `onRoute` hook: compiles each route's declared behaviour into its
 * profile once, so a request only looks it up.
 */
export function compileRouteProfile(route: RouteOptions): void {
  const config = (route.config ?? {}) as Record<string, unknown>;
  const behaviour = (config[BEHAVIOUR] ?? {}) as RouteBehaviour;
  const profile: RouteProfile = {
    template: route.url,
    accessLog: behaviour.accessLog ?? true,
    access: behaviour.access ?? 'authenticated',
    runsTask: behaviour.runsTask ?? false,
    admin: behaviour.admin ?? false,
    taskName: taskNameReader(behaviour.taskBody),
    taskOptions: taskOptionsReader(behaviour.taskBody),
  };
  // A cast: plugins (@fastify/rate-limit) declare their own keys on Fastify's config type.
  route.config = { ...config, [PROFILE]: profile } as RouteOptions['config'];
}

/** The profile stored in a route's config; a default one for unmatched requests. */
export function profileIn(
  config: Readonly<Record<string, unknown>> | undefined,
  url: string | undefined,
): RouteProfile {
  const profile = config?.[PROFILE] as RouteProfile | undefined;
  // A request no route matched still needs credentials: a 404 would tell strangers which routes exist.
  return (
    profile ?? {
      template: url ?? UNMATCHED_ROUTE,
      accessLog: true,
      access: 'authenticated',
      runsTask: false,
      admin: false,
      taskName: noTask,
      taskOptions: wholeQuery,
    }
  );
}

function taskNameReader(source: TaskNameSource | undefined): RouteProfile['taskName'] {
  if (source === undefined) return noTask;
  if ('param' in source) {
    const { param } = source;
    return (request) => stringOrUndefined((request.params as Record<string, unknown>)[param]);
  }
  const { query } = source;
  return (request) => stringOrUndefined((request.query as Record<string, unknown>)[query]);
}

const wholeQuery = (request: FastifyRequest) => request.query as Readonly<Record<string, unknown>>;

function taskOptionsReader(source: TaskNameSource | undefined): RouteProfile['taskOptions'] {
  if (source === undefined || 'param' in source) return wholeQuery;
  const routeQuery = new Set([source.query, ...(source.routeQuery ?? [])]);
  return (request) =>
    Object.fromEntries(
      Object.entries(wholeQuery(request)).filter(([name]) => !routeQuery.has(name)),
    );
}

const stringOrUndefined = (value: unknown) => (typeof value === 'string' ? value : undefined);
