/**
 * `@corepool/core/thread`: what a host's own thread entry is made of. The
 * entry imports its tasks and exports what `threadHandlers` returns:
 *
 * ```ts
 * import { threadHandlers } from '@corepool/core/thread';
 * import { myTasks } from './tasks';
 * const handlers = threadHandlers(myTasks);
 * export default handlers.run;
 * export const { batch, spare } = handlers;
 * ```
 *
 * It imports nothing else of the pool, so a thread loads only what it runs.
 *
 * @packageDocumentation
 * @module \@corepool/core/thread
 */
export { threadHandlers, type ThreadHandlers } from './workers/thread-handlers';
