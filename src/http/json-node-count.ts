const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * True when JSON text has more than `limit` strings (object keys included), arrays and
 * objects, found by one pass over the bytes that stops at the first one past the limit.
 * Numbers, `true`, `false` and `null` are not counted: a matrix is numbers.
 *
 * Runs before JSON.parse on the event loop. What JSON.parse costs follows what it allocates:
 * many keys, empty arrays or distinct short strings cost it several times what a body of
 * numbers of the same size does, and this scan a fraction of either (ADR 0009 has the
 * times). The text need not be valid JSON: JSON.parse decides that afterwards.
 */
export function hasMoreNodesThan(bytes: Uint8Array, limit: number): boolean {
  let nodes = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
      if (++nodes > limit) return true;
    } else if ((byte === OPEN_BRACE || byte === OPEN_BRACKET) && ++nodes > limit) {
      return true;
    }
  }
  return false;
}
