import cluster, { type Worker } from 'node:cluster';
import { isQuotaRequest, type QuotaAnswer, type QuotaRequest } from './quota.protocol';

const ignore = () => undefined;

/** One client's request window. */
interface Window {
  count: number;
  endsAt: number;
}

/** Windows are swept from memory this often, so idle clients cost nothing. */
const SWEEP_INTERVAL_MS = 10_000;

/**
 * The primary's side of per-client quotas across the cluster's processes: a
 * fixed window of requests per client (what `@fastify/rate-limit`'s store
 * asks for) and the task slots each client holds. Slots are also counted per
 * process, so the slots of a process that dies are given back.
 *
 * Imports no Nest: the primary stays small and starts fast.
 */
export function startClusterQuotas(now: () => number = Date.now): { stop(): void } {
  const windows = new Map<string, Window>();
  const slots = new Map<string, number>();
  const heldBy = new Map<number, Map<string, number>>();

  const hold = (processId: number, key: string, delta: number) => {
    slots.set(key, (slots.get(key) ?? 0) + delta);
    if (slots.get(key) === 0) slots.delete(key);
    const held = heldBy.get(processId) ?? new Map<string, number>();
    held.set(key, (held.get(key) ?? 0) + delta);
    if (held.get(key) === 0) held.delete(key);
    heldBy.set(processId, held);
  };

  const answer = (handle: Worker, message: QuotaRequest): QuotaAnswer | undefined => {
    switch (message.type) {
      case 'corepool:quota:hit': {
        const at = now();
        let window = windows.get(message.key);
        if (window === undefined || window.endsAt <= at) {
          window = { count: 0, endsAt: at + message.windowMs };
          windows.set(message.key, window);
        }
        window.count += 1;
        return {
          type: 'corepool:quota:count',
          id: message.id,
          current: window.count,
          ttl: window.endsAt - at,
        };
      }
      case 'corepool:quota:acquire': {
        const granted = (slots.get(message.key) ?? 0) < message.max;
        if (granted) hold(handle.id, message.key, 1);
        return { type: 'corepool:quota:grant', id: message.id, granted };
      }
      case 'corepool:quota:release':
        // Only what this process holds: a late release after a restart cannot free another's slot.
        if ((heldBy.get(handle.id)?.get(message.key) ?? 0) > 0) hold(handle.id, message.key, -1);
        return undefined;
    }
  };

  const onMessage = (handle: Worker, message: unknown) => {
    if (!isQuotaRequest(message)) return;
    const reply = answer(handle, message);
    // A process that went away meanwhile needs no answer; the callback keeps a failed send quiet.
    if (reply !== undefined && handle.isConnected()) handle.send(reply, ignore);
  };

  const onExit = (handle: Worker) => {
    for (const [key, count] of heldBy.get(handle.id) ?? []) hold(handle.id, key, -count);
    heldBy.delete(handle.id);
  };

  const sweep = setInterval(() => {
    const at = now();
    for (const [key, window] of windows) if (window.endsAt <= at) windows.delete(key);
  }, SWEEP_INTERVAL_MS).unref();

  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  return {
    stop: () => {
      clearInterval(sweep);
      cluster.off('message', onMessage);
      cluster.off('exit', onExit);
    },
  };
}
