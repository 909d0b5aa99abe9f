/**
 * The wire between the server and an engine process: length-prefixed frames
 * on a pipe of their own, instead of Node's IPC channel. The IPC channel runs
 * every message through V8's general serializer (and its own bookkeeping) on
 * both sides; here a message is a small JSON header, and every long string in
 * it (a result's rows, already JSON text) travels beside the header as its
 * UTF-8 bytes, neither escaped nor parsed on the way.
 *
 * A frame: u32 LE byte length of what follows; u32 LE header byte length,
 * its top bit set when the header holds tagged values; the header (JSON);
 * the long strings' bytes, one after another.
 *
 * Values round-trip as they did through the structured clone: bigint,
 * Buffers (as Buffer), NaN, ±Infinity, -0 and `undefined` in an array (an
 * argument left out) are tagged, as is a data object that happens to own the
 * tag's key. An object property holding `undefined` is left out, as JSON
 * does: no reader of these messages tells the two apart.
 */

/** The key of a tagged value: no JSON text a client sends becomes a key of ours unescaped (see `escaped`). */
const TAG = '\u0000';
/** Strings this long or longer travel as bytes beside the header. */
const BYTES_CHARS = 1024;
const PREFIX_BYTES = 8;
const TAGGED_BIT = 0x80000000;

type Tagged =
  | { [TAG]: 's'; o: number; n: number }
  | { [TAG]: 'b' | 'n' | 'x'; v: string }
  | { [TAG]: 'u' }
  | { [TAG]: 'o'; v: [string, unknown][] };

/** Writes one message as a frame. */
export function encodeFrame(message: unknown): Buffer {
  const strings: string[] = [];
  let bytes = 0;
  let tagged = false;
  const tag = (value: Tagged): Tagged => {
    tagged = true;
    return value;
  };
  // `this` is the holder: the original value of a Buffer (which JSON.stringify has already turned into its toJSON form) and whether it is an array.
  function replacer(this: unknown, key: string, value: unknown): unknown {
    switch (typeof value) {
      case 'string': {
        if (value.length < BYTES_CHARS) return value;
        const n = Buffer.byteLength(value);
        strings.push(value);
        bytes += n;
        return tag({ [TAG]: 's', o: bytes - n, n });
      }
      case 'number':
        return Number.isFinite(value) && !Object.is(value, -0) ? value : tag({ [TAG]: 'n', v: Object.is(value, -0) ? '-0' : String(value) });
      case 'bigint':
        return tag({ [TAG]: 'b', v: value.toString() });
      case 'undefined':
        return Array.isArray(this) ? tag({ [TAG]: 'u' }) : undefined;
      case 'object': {
        if (value === null) return null;
        const original = (this as Record<string, unknown>)[key];
        if (original instanceof Uint8Array) return tag({ [TAG]: 'x', v: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') });
        return !Array.isArray(value) && Object.hasOwn(value, TAG) ? tag({ [TAG]: 'o', v: Object.entries(value) }) : value;
      }
      default:
        return value;
    }
  }
  const header = JSON.stringify(message, replacer) ?? 'null';
  const headerBytes = Buffer.byteLength(header);
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + headerBytes + bytes);
  frame.writeUInt32LE(4 + headerBytes + bytes, 0);
  frame.writeUInt32LE((headerBytes | (tagged ? TAGGED_BIT : 0)) >>> 0, 4);
  let at = PREFIX_BYTES + frame.write(header, PREFIX_BYTES);
  for (const text of strings) at += frame.write(text, at);
  return frame;
}

/** Reads one frame's message; `frame` starts at the frame's first byte. */
function decodeFrame(frame: Buffer, length: number): unknown {
  const word = frame.readUInt32LE(4);
  const headerBytes = word & ~TAGGED_BIT;
  const header = frame.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headerBytes);
  if ((word & TAGGED_BIT) === 0) return JSON.parse(header) as unknown;
  const base = PREFIX_BYTES + headerBytes;
  const end = 4 + length;
  return JSON.parse(header, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, TAG)) return value;
    const tagged = value as Tagged;
    switch (tagged[TAG]) {
      case 's': {
        const start = base + tagged.o;
        if (start + tagged.n > end) throw new Error('engine channel: a string runs past its frame');
        return frame.toString('utf8', start, start + tagged.n);
      }
      case 'b':
        return BigInt(tagged.v);
      case 'n':
        return Number(tagged.v);
      case 'x':
        return Buffer.from(tagged.v, 'base64');
      case 'u':
        // An array element revived as undefined is left out: the array keeps its length, and the element reads undefined.
        return undefined;
      case 'o':
        return Object.fromEntries(tagged.v);
      default:
        throw new Error('engine channel: an unknown tag');
    }
  }) as unknown;
}

/**
 * Cuts the bytes of a pipe into messages. Bytes come in pieces of any size:
 * a piece may hold several frames, or a part of one.
 */
export class FrameReader {
  private pieces: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly onMessage: (message: unknown) => void) {}

  push(piece: Buffer): void {
    this.pieces.push(piece);
    this.buffered += piece.length;
    while (this.buffered >= PREFIX_BYTES) {
      let head = this.pieces[0] as Buffer;
      if (head.length < PREFIX_BYTES) head = this.joined();
      const frameBytes = 4 + head.readUInt32LE(0);
      if (this.buffered < frameBytes) return;
      if (head.length < frameBytes) head = this.joined();
      const rest = head.length - frameBytes;
      if (rest === 0) {
        this.pieces.shift();
      } else {
        this.pieces[0] = head.subarray(frameBytes);
      }
      this.buffered -= frameBytes;
      // The frame is read before the next one: a message handler that throws leaves the rest of the pipe in order.
      this.onMessage(decodeFrame(rest === 0 ? head : head.subarray(0, frameBytes), frameBytes - 4));
    }
  }

  /** Everything buffered as one Buffer (only when a frame spans pieces). */
  private joined(): Buffer {
    const whole = Buffer.concat(this.pieces, this.buffered);
    this.pieces = [whole];
    return whole;
  }
}
