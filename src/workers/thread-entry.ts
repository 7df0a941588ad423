/**
 * The module every worker thread of the service loads: the engine's thread
 * code with the built-in tasks imported into it (one bundle, ADR 0019), and
 * `TASK_MODULES` loaded by path. It imports nothing from Nest, so a thread is
 * ready in milliseconds.
 */
import { threadHandlers } from '@corepool/core/thread';
import { builtInTasks } from '../tasks';

const handlers = threadHandlers(builtInTasks);

export default handlers.run;
export const { batch, spare } = handlers;
