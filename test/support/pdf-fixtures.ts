import { createHash } from 'node:crypto';
import { constants, deflateRawSync, deflateSync } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';

/** A real PDF made with pdf-lib: known title, author, dates and text on each page. */
export async function invoicePdf(pages: readonly string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Invoice 42');
  doc.setAuthor('ACME Payments');
  doc.setCreationDate(new Date('2026-01-02T03:04:05Z'));
  doc.setModificationDate(new Date('2026-02-03T04:05:06Z'));
  for (const text of pages) doc.addPage().drawText(text, { x: 50, y: 700, size: 14 });
  return doc.save();
}

// The padding string of the PDF Standard security handler (ISO 32000-1, 7.6.3.3).
const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

/**
 * A PDF protected by a user password (Standard security handler, revision 2,
 * 40-bit RC4), written by hand because pdf-lib cannot encrypt. The `/U` entry
 * is computed from the password as the standard prescribes (algorithms 2 and
 * 4), so a conforming reader asks for the password and refuses without it.
 */
export function passwordProtectedPdf(password = 'secret'): Uint8Array {
  const id = createHash('md5').update('corepool-fixture').digest();
  const owner = createHash('md5').update('owner').digest();
  const O = Buffer.concat([owner, owner]);
  const permissions = -44;
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const padded = Buffer.concat([Buffer.from(password, 'latin1'), PAD]).subarray(0, 32);
  const key = createHash('md5')
    .update(Buffer.concat([padded, O, p, id]))
    .digest()
    .subarray(0, 5);
  const U = rc4(key, PAD);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${O.toString('hex')}> /U <${U.toString('hex')}> /P ${permissions} >>`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A PDF from its objects (numbered from 1, object 1 the catalog), with a correct xref table. */
function pdfFromObjects(objects: readonly Buffer[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.concat([
      Buffer.from(`${index + 1} 0 obj\n`, 'latin1'),
      body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(object);
    length += object.length;
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) tail += `${String(offset).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
}

function streamObject(dictionary: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`<< ${dictionary} /Length ${data.length} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);
}

/**
 * The zlib stream of `mib` MiB of zeros, built without compressing them all:
 * one MiB deflated with a sync flush is a run of blocks that can be repeated
 * (no back-reference crosses it), then a final empty block and the checksum.
 */
function zerosZlib(mib: number): Buffer {
  const chunk = deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: constants.Z_SYNC_FLUSH });
  const total = mib * 1024 * 1024;
  // Adler-32 of n zero bytes: a stays 1, b adds 1 per byte.
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((total % 65521) << 16) >>> 0) + 1);
  return Buffer.concat([
    Buffer.from([0x78, 0x9c]),
    ...Array.from({ length: mib }, () => chunk),
    Buffer.from([0x03, 0x00]),
    adler,
  ]);
}

/**
 * A few KB of PDF whose one page's content stream, compressed twice
 * (`/Filter [/FlateDecode /FlateDecode]`), inflates to `mib` MiB.
 */
export function inflationBombPdf(mib = 2048): Uint8Array {
  const content = deflateSync(zerosZlib(mib), { level: 9 });
  return pdfFromObjects([
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 'latin1'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>'),
    streamObject('/Filter [/FlateDecode /FlateDecode]', content),
  ]);
}

/** A PDF whose page tree points back at itself: pages node 2's kid is node 3, whose kid is 2. */
export function circularPageTreePdf(): Uint8Array {
  return pdfFromObjects([
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 2 >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 2 >>', 'latin1'),
  ]);
}
