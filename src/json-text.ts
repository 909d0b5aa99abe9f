/**
 * JSON out, exact for 64-bit integers and for ±Infinity. A value holding a
 * bigint or an infinite number is written by a small serializer of our own;
 * everything else, JSON text written elsewhere (RawJson) included, takes the
 * native path.
 *
 * ±Infinity (a REAL that SQLite holds, `SELECT 1e308 * 10`) is written as the
 * JSON number 9e999 or -9e999: valid JSON, which JSON.parse and Python's json
 * read back as ±Infinity, where JSON.stringify would write `null` and make it
 * SQL NULL. NaN has no JSON form and SQLite has no NaN (it stores and answers
 * NULL for one), so a NaN is written `null`.
 */

import { randomBytes } from 'node:crypto';

/** Thrown when JSON.stringify meets a RawJson, so that our writer takes over; made once (no stack to capture per response). */
const RAW_JSON_INSIDE: unique symbol = Symbol('RawJson inside');

/** Spliced text this long or longer stays a part of its own (jsonParts): never copied into a larger string. */
const OWN_PART_CHARS = 64 * 1024;

/**
 * JSON text written elsewhere (the engine writes result rows once, see
 * ExecRequest.jsonRows), spliced into a response as it is.
 */
export class RawJson {
  /** `text`: the JSON text, or chunks of it whose concatenation is the text. */
  constructor(readonly text: string | readonly string[]) {}

  /**
   * JSON.stringify cannot splice text (JSON.rawJSON takes no objects or
   * arrays): inside jsonParts' native pass a RawJson stands as a marker
   * string, replaced by its text afterwards; anywhere else it hands over to
   * our writer.
   */
  toJSON(): string {
    if (marked !== null) return `${MARKER}${marked.push(this) - 1}`;
    // A symbol, not an Error: it is caught at once in jsonParts, and capturing a stack per response would cost.
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    throw RAW_JSON_INSIDE;
  }
}

/**
 * What a RawJson stands as in the native pass: a nonce no client can know,
 * so no text a client sent can pass for it; JSON.stringify writes it as it
 * is (no character in it needs escaping).
 */
const MARKER = `raw-json-${randomBytes(12).toString('hex')}-`;

/** The RawJson texts met by the native pass under way, in the order it wrote their markers; null outside it. */
let marked: RawJson[] | null = null;

/** Collects the text; a long RawJson text is kept as its own part rather than copied. */
class Parts {
  readonly parts: string[] = [];
  private text = '';

  add(text: string): void {
    this.text += text;
  }

  splice(text: string): void {
    if (text.length < OWN_PART_CHARS) return this.add(text);
    this.parts.push(this.text, text);
    this.text = '';
  }

  done(): string[] {
    this.parts.push(this.text);
    return this.parts;
  }
}

/** The JSON text of ±Infinity: a number beyond the double range, as SQLite's own JSON writes it (and sql-literal.ts' SQL). */
export function infinityJson(value: number): string {
  return value > 0 ? '9e999' : '-9e999';
}

function isInfinite(value: unknown): value is number {
  return value === Infinity || value === -Infinity;
}

function writeValue(value: unknown, out: Parts): boolean {
  if (typeof value === 'bigint') out.add(value.toString());
  else if (isInfinite(value)) out.add(infinityJson(value));
  else if (value instanceof RawJson) {
    if (typeof value.text === 'string') out.splice(value.text);
    else for (const chunk of value.text) out.splice(chunk);
  } else if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    out.add(text);
  } else if (Array.isArray(value)) writeArray(value, out);
  else if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return writeValue((value as { toJSON: () => unknown }).toJSON(), out);
  else writeObject(value as Record<string, unknown>, out);
  return true;
}

function writeArray(items: readonly unknown[], out: Parts): void {
  out.add('[');
  items.forEach((item, i) => {
    if (i > 0) out.add(',');
    if (!writeValue(item, out)) out.add('null');
  });
  out.add(']');
}

function writeObject(object: Record<string, unknown>, out: Parts): void {
  out.add('{');
  let first = true;
  for (const [key, member] of Object.entries(object)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    out.add(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    writeValue(member, out);
  }
  out.add('}');
}

/** How deep a response nests its RawJson texts: body → results → result → rows. */
const RAW_DEPTH = 4;

/** Whether a RawJson sits in `value` within `depth` levels: then our writer goes first, not a stringify that would throw half way. */
function holdsRaw(value: unknown, depth: number): boolean {
  if (value instanceof RawJson) return true;
  if (depth === 0 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => holdsRaw(item, depth - 1));
  for (const key in value) if (holdsRaw((value as Record<string, unknown>)[key], depth - 1)) return true;
  return false;
}

/**
 * Whether an infinite number sits anywhere in `value` (RawJson texts are
 * written already). Asked only when the native text holds a `null`, which is
 * how JSON.stringify writes one, so most answers never pay for the walk.
 */
function holdsInfinity(value: unknown): boolean {
  if (isInfinite(value)) return true;
  // Bytes hold no number to look for, and walking a big Buffer's indices would cost.
  if (value === null || typeof value !== 'object' || value instanceof RawJson || ArrayBuffer.isView(value))
    return false;
  if (Array.isArray(value)) {
    for (const item of value as unknown[])
      if (isInfinite(item) || (typeof item === 'object' && holdsInfinity(item))) return true;
    return false;
  }
  for (const key in value) if (holdsInfinity((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** The native text unless it wrote an infinite number as `null`. */
function nativeKept(text: string, value: unknown): boolean {
  return !text.includes('null') || !holdsInfinity(value);
}

function written(value: unknown): string[] {
  const out = new Parts();
  if (!writeValue(value, out)) out.add('null');
  return out.done();
}

/**
 * The JSON text of `value` as parts to be sent one after another: one part,
 * unless it splices long RawJson texts, which stay parts of their own so that
 * a big result is never copied into a bigger string.
 */
export function jsonParts(value: unknown): string[] {
  const raws: RawJson[] = [];
  let text: string;
  marked = holdsRaw(value, RAW_DEPTH) ? raws : null;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    marked = null;
    if (error !== RAW_JSON_INSIDE && !(error instanceof TypeError && /BigInt/.test(error.message))) throw error;
    return written(value);
  } finally {
    marked = null;
  }
  if (!nativeKept(text, value)) return written(value);
  return raws.length === 0 ? [text] : (spliced(text, raws) ?? written(value));
}

/**
 * The native pass's text with each marker replaced by its RawJson's text (a
 * long one a part of its own); undefined if a marker is not where the pass
 * put it (a toJSON above it changed what was written), for our writer to do.
 */
function spliced(text: string, raws: readonly RawJson[]): string[] | undefined {
  const out = new Parts();
  let at = 0;
  for (const [index, raw] of raws.entries()) {
    const marker = `"${MARKER}${index}"`;
    const found = text.indexOf(marker, at);
    if (found < 0) return undefined;
    out.add(text.slice(at, found));
    if (typeof raw.text === 'string') out.splice(raw.text);
    else for (const chunk of raw.text) out.splice(chunk);
    at = found + marker.length;
  }
  out.add(text.slice(at));
  return out.done();
}

export function stringifyJson(value: unknown): string {
  const parts = jsonParts(value);
  return parts.length === 1 ? (parts[0] as string) : parts.join('');
}
