import { TaskInputError } from '../task-input-error';
import { defineTask } from '../task-definition';

// The body limit (64 MiB) does not bound JSON.parse: its cost grows with what it allocates, and
// faster than linearly (GC). At 64 MiB, 22M empty objects `[{},{},…]` took 28 s and 2 GB, 32M
// nested arrays 27 s, 4M objects with one distinct key each 12 s (every new key shape is a new
// hidden class), and 32M numbers in one array 7.6 s and 1 GB. So a scan of the raw bytes counts
// first, and these bounds hold before parsing. Worst cases measured within them, scan included,
// on the reference machine while it was shared (load average ~12 on 2 vCPUs, so several times
// slower than alone): one object with 1M distinct keys ~9 s, 1M objects with a distinct key
// each ~10 s, 4M numbers in one array ~1 s and ~100 MB; all far below the 30 s deadline.
const MAX_CONTAINERS = 2_000_000; // objects and arrays, at any depth
const MAX_KEYS = 1_000_000; // object keys, at any depth, counted as if all were distinct
// Array elements and object members, counted by the commas between them: bounds the memory of
// a body of bare numbers, which no other count sees.
const MAX_SEPARATORS = 4_000_000;
const MAX_DEPTH = 64;
// Keeps the response (and the per-field state) small whatever the records look like.
const MAX_FIELDS = 1_000;
// Keys that poison prototypes when a consumer later merges or copies the result; they are
// skipped rather than summarised.
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
// Long keys are cut in error messages so that a hostile key cannot bloat the response.
const MAX_KEY_IN_MESSAGE = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Query string of the `json-stats` task: it takes no options. */
export class JsonStatsInput {}

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
export const jsonStatsTask = defineTask<JsonStatsInput, JsonStatsOutput>({
  name: 'json-stats',
  description:
    'Parses a JSON array of objects and returns count, min, max, mean and sum of each numeric field.',
  input: JsonStatsInput,
  binary: { contentTypes: ['application/json', 'application/octet-stream'] },
  limits: {
    maxFields: MAX_FIELDS,
    maxObjectsAndArrays: MAX_CONTAINERS,
    maxKeys: MAX_KEYS,
    maxValues: MAX_SEPARATORS,
    maxDepth: MAX_DEPTH,
    maxBodyBytes: 'the server body limit',
  },
  run(_input, body) {
    const records = parseRecords(body ?? new Uint8Array(0));
    const stats = new Map<string, Omit<FieldStats, 'mean'>>();

    for (let index = 0; index < records.length; index++) {
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
    return { count: records.length, fields };
  },
});

function parseRecords(body: Uint8Array): unknown[] {
  checkSize(body);
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

// Counts what JSON.parse would allocate, outside strings (bytes of multi-byte UTF-8 characters
// are all >= 0x80, so they never look like structure). Exact for valid JSON; on invalid JSON
// the counts may be off past the error, where JSON.parse stops anyway. ~0.25 s for 64 MiB.
function checkSize(body: Uint8Array): void {
  let containers = 0;
  let keys = 0;
  let depth = 0;
  let separators = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    switch (byte) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (++containers > MAX_CONTAINERS) {
          throw new TaskInputError(`body has more than ${MAX_CONTAINERS} objects and arrays`);
        }
        if (++depth > MAX_DEPTH) {
          throw new TaskInputError(`body nests objects and arrays deeper than ${MAX_DEPTH} levels`);
        }
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        depth--;
        break;
      case COLON:
        if (++keys > MAX_KEYS) throw new TaskInputError(`body has more than ${MAX_KEYS} keys`);
        break;
      case COMMA:
        if (++separators > MAX_SEPARATORS) {
          throw new TaskInputError(`body has more than ${MAX_SEPARATORS} values`);
        }
        break;
      default:
        // Any other byte is part of a value: nothing to count.
        break;
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
