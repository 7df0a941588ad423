import { TaskInputError } from '@corepool/core/task';
import { defineTask } from '@corepool/core/task';
import { inputSchema } from '@corepool/core/task';

// The body limit does not bound JSON.parse, whose cost follows what it allocates, and faster
// than linearly: empty objects, nested arrays, distinct short strings (V8 internalizes them) and
// distinct key orders (each a new hidden class) each took tens of seconds at the body limit. So
// a scan of the raw bytes enforces the bounds below before JSON.parse runs; within them the worst
// case stays near the other tasks'. ADR 0050 has the times and memory measured.
const MAX_DEPTH = 64;
const MAX_CONTAINERS = 1_000_000; // objects and arrays, at any depth
// Distinct strings (keys and values alike) plus distinct key orders (an object's key sequence
// so far). Repeats are cheap, so a 64 MiB file of ordinary records (a few keys, repeated string
// values) stays far below this.
const MAX_DISTINCT = 250_000;
// Keeps the response (and the per-field state) small whatever the records look like.
const MAX_FIELDS = 1_000;
// Keys that poison prototypes when a consumer later merges or copies the result; they are
// skipped rather than summarised.
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
// Long keys are cut in error messages so that a hostile key cannot bloat the response.
const MAX_KEY_IN_MESSAGE = 64;

// Open-addressing table for the scan: a power of two at least twice MAX_DISTINCT, so that
// probes stay short.
const DISTINCT_SLOTS = 1 << 19;
const FNV_PRIME = 0x0100_0193;
const MURMUR_M = 0x5bd1_e995;
const GOLDEN = 0x9e37_79b1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Query string of the `json-stats` task: it takes no options. */
export type JsonStatsInput = Record<string, never>;

export const jsonStatsInput = inputSchema<JsonStatsInput>('JsonStatsInput', {});

/** Statistics of one numeric field. */
export interface FieldStats {
  /** Number of records whose value for the field is a finite number. */
  count: number;
  min: number;
  max: number;
  mean: number;
  sum: number;
}

/** Result of the `json-stats` task. */
export interface JsonStatsOutput {
  /** Number of records. */
  count: number;
  /** Per top-level field that holds a finite number in at least one record. */
  fields: Record<string, FieldStats>;
}

/**
 * Parses a JSON array of records and summarises their numeric fields. Decoding and parsing
 * happen in the worker thread: a large JSON.parse never blocks the event loop.
 */
/** Records between two progress reports, at least. */
const PROGRESS_STRIDE = 10_000;

export const jsonStatsTask = defineTask<JsonStatsInput, JsonStatsOutput>({
  name: 'json-stats',
  description:
    'Parses a JSON array of objects and returns count, min, max, mean and sum of each numeric field.',
  input: jsonStatsInput,
  binary: { contentTypes: ['application/json', 'application/octet-stream'] },
  size: (_input, body) => body?.byteLength ?? 0,
  limits: {
    maxFields: MAX_FIELDS,
    maxDepth: MAX_DEPTH,
    maxObjectsAndArrays: MAX_CONTAINERS,
    maxDistinctStringsAndKeyOrders: MAX_DISTINCT,
    maxBodyBytes: 'the server body limit',
  },
  run(_input, body, context) {
    const records = parseRecords(body ?? new Uint8Array(0));
    // JSON.parse is one call that cannot stop halfway; the summary can, every 4,096 records.
    context.throwIfCancelled();
    context.progress(0, `parsed ${records.length} records`);
    // A report costs a clock read in the rate limiter: one per PROGRESS_STRIDE records is enough.
    const stride = Math.max(PROGRESS_STRIDE, Math.ceil(records.length / 100));
    const stats = new Map<string, Omit<FieldStats, 'mean'>>();

    for (let index = 0; index < records.length; index++) {
      if ((index & 0xfff) === 0) context.throwIfCancelled();
      if (index % stride === 0 && index > 0) {
        context.progress(index / records.length, `${index} of ${records.length} records`);
      }
      const record: unknown = records[index];
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        throw new TaskInputError(
          `body[${index}] must be an object, got ${describe(record)}`,
          `body[${index}]`,
        );
      }
      // Object.keys reads own properties only, so nothing inherited is ever summarised.
      for (const key of Object.keys(record)) {
        const value: unknown = (record as Record<string, unknown>)[key];
        // Non-finite covers 1e400, which JSON.parse turns into Infinity.
        if (typeof value !== 'number' || !Number.isFinite(value) || UNSAFE_KEYS.has(key)) {
          continue;
        }
        const field = stats.get(key);
        if (field) {
          field.count++;
          field.sum += value;
          if (value < field.min) field.min = value;
          if (value > field.max) field.max = value;
        } else if (stats.size < MAX_FIELDS) {
          stats.set(key, { count: 1, min: value, max: value, sum: value });
        } else {
          throw new TaskInputError(
            `body has more than ${MAX_FIELDS} distinct numeric fields ` +
              `(the first one past the limit is ${quote(key)})`,
            `body[${index}]`,
          );
        }
      }
    }

    // Object.fromEntries defines own properties, so even an odd key could not reach a prototype.
    const fields = Object.fromEntries(
      Array.from(stats, ([key, { count, min, max, sum }]) => [
        key,
        { count, min, max, mean: sum / count, sum },
      ]),
    );
    context.progress(1, `${records.length} records`);
    return { count: records.length, fields };
  },
});

function parseRecords(body: Uint8Array): unknown[] {
  checkCost(body);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new TaskInputError('body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new TaskInputError(`body is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) {
    throw new TaskInputError(`body must be a JSON array of objects, got ${describe(parsed)}`);
  }
  return parsed;
}

// Counts, outside strings, what makes JSON.parse slow (see the bounds above) and rejects the body
// before parsing when a bound is exceeded. Bytes of multi-byte UTF-8 characters are all >= 0x80,
// so they never look like structure. Exact for valid JSON; for invalid JSON the counts may be off
// past the error, where JSON.parse stops anyway. Distinct strings and key orders are recognised
// by a pair of 32-bit hashes (52 bits kept) with random seeds per call: a rare collision only
// undercounts a little, and a client cannot aim for collisions it cannot see. Linear, and a
// small share of the parse it guards (ADR 0050).
function checkCost(body: Uint8Array): void {
  const seen = new Float64Array(DISTINCT_SLOTS);
  let distinct = 0;
  // Adds a 52-bit fingerprint (never 0, which marks an empty slot) unless already present.
  const remember = (high: number, low: number): void => {
    const fingerprint = (high >>> 0) * 0x10_0000 + (low >>> 12) + 1;
    let slot = low & (DISTINCT_SLOTS - 1);
    for (let entry = seen[slot]; entry !== 0; entry = seen[slot]) {
      if (entry === fingerprint) return;
      slot = (slot + 1) & (DISTINCT_SLOTS - 1);
    }
    seen[slot] = fingerprint;
    if (++distinct > MAX_DISTINCT) {
      throw new TaskInputError(
        `body has more than ${MAX_DISTINCT} distinct strings and object key orders`,
      );
    }
  };

  const seedHigh = (Math.random() * 2 ** 32) | 0;
  const seedLow = (Math.random() * 2 ** 32) | 0;
  // Hash of the key order so far of each open object, indexed by depth.
  const orderHigh = new Int32Array(MAX_DEPTH + 1);
  const orderLow = new Int32Array(MAX_DEPTH + 1);
  let high = 0;
  let low = 0;
  let containers = 0;
  let depth = 0;
  let inString = false;

  for (let i = 0; i < body.length; i++) {
    let byte = body[i]!;
    if (inString) {
      if (byte === QUOTE) {
        inString = false;
        remember(high, low);
        continue;
      }
      // An escape hashes with the byte it escapes, which is never the closing quote.
      if (byte === BACKSLASH) byte = (byte << 8) | (body[++i] ?? 0);
      high = Math.imul(high ^ byte, FNV_PRIME);
      low = Math.imul(low ^ byte, MURMUR_M);
      continue;
    }
    switch (byte) {
      case QUOTE:
        inString = true;
        high = seedHigh;
        low = seedLow;
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (++containers > MAX_CONTAINERS) {
          throw new TaskInputError(`body has more than ${MAX_CONTAINERS} objects and arrays`);
        }
        if (++depth > MAX_DEPTH) {
          throw new TaskInputError(`body nests objects and arrays deeper than ${MAX_DEPTH} levels`);
        }
        orderHigh[depth] = seedHigh;
        orderLow[depth] = seedLow;
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        if (depth > 0) depth--;
        break;
      case COLON: {
        // The string that just closed is a key: extend the object's key order with it.
        const orderedHigh = Math.imul(orderHigh[depth]! ^ high, GOLDEN);
        const orderedLow = Math.imul(orderLow[depth]! ^ low, FNV_PRIME) ^ (orderedHigh >>> 15);
        orderHigh[depth] = orderedHigh;
        orderLow[depth] = orderedLow;
        remember(orderedHigh, orderedLow);
        break;
      }
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function quote(key: string): string {
  return JSON.stringify(
    key.length > MAX_KEY_IN_MESSAGE ? `${key.slice(0, MAX_KEY_IN_MESSAGE)}…` : key,
  );
}
