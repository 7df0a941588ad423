/**
 * The module every worker thread of a pool loads unless its host brings its
 * own (`PoolHost.threadFile`): the pool's task modules, nothing else.
 */
import { threadHandlers } from './thread-handlers';

const handlers = threadHandlers();

export default handlers.run;
export const { batch, spare } = handlers;
