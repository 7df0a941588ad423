/**
 * A JSON array of wide records (`json-stats`' costliest ordinary input per byte: every record
 * an object of `keys` fields, so the parsed objects take several times the text), at most
 * `bytes` long, within the task's bounds.
 */
export function wideRecords(bytes: number, keys = 20_000): Buffer {
  // The first 1,000 fields are numbers (the most `json-stats` summarises), the rest `true`:
  // past ~1,000 properties V8 keeps each record as a dictionary of its own.
  const fields = Array.from(
    { length: keys },
    (_, index) =>
      `"f${String(index).padStart(5, '0')}":${index < 1000 ? `${(index * 7919) % 100_000}.5` : 'true'}`,
  );
  const record = Buffer.from(`{${fields.join(',')}}`);
  const count = Math.max(1, Math.floor((bytes - 2) / (record.length + 1)));
  const body = Buffer.alloc(2 + count * (record.length + 1) - 1);
  body[0] = 0x5b; // [
  let at = 1;
  for (let index = 0; index < count; index++) {
    if (index > 0) body[at++] = 0x2c; // ,
    at += record.copy(body, at);
  }
  body[at] = 0x5d; // ]
  return body;
}
