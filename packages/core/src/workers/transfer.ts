/** Bodies from this size up are moved to a thread; smaller ones are cheaper to copy. */
export const TRANSFER_THRESHOLD_BYTES = 64 * 1024;

/** True when the view covers its whole, unshared buffer, so moving the buffer moves nothing else. */
export function ownsWholeBuffer(bytes: Uint8Array): boolean {
  return (
    bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength &&
    !(bytes.buffer instanceof SharedArrayBuffer)
  );
}

/**
 * The bytes to post and the buffers to transfer with them. Node's small
 * Buffers share one pooled ArrayBuffer, which must never be transferred (it
 * would detach unrelated Buffers), so such a view is first copied once into a
 * buffer of its own; large bodies from Fastify already own theirs.
 */
export function prepareTransfer(body: Uint8Array): {
  bytes: Uint8Array;
  transferList: ArrayBuffer[];
} {
  if (body.byteLength < TRANSFER_THRESHOLD_BYTES) return { bytes: body, transferList: [] };
  const bytes = ownsWholeBuffer(body) ? body : new Uint8Array(body);
  return { bytes, transferList: [bytes.buffer as ArrayBuffer] };
}
