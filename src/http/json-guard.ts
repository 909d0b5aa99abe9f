/**
 * What JSON.parse accepts but the service must not: keys that name an
 * object's prototype machinery, strings holding a lone UTF-16 surrogate, and
 * integers JSON.parse would round. Each is refused with a 400 rather than
 * passed on altered: a student's value reaches the database exactly as sent,
 * or not at all.
 */
import { EngineError } from '../errors';

/** Keys that reach an object's prototype when code assigns or tests them (`obj[key] = …`, `key in obj`). */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const PROTOTYPE_WORDS = [...PROTOTYPE_KEYS];

/** With the u flag a paired surrogate is one code point; only a lone one is in the Cs category. */
const LONE_SURROGATE = /\p{Cs}/u;

/** An integer literal: no fraction, no exponent (a client who writes those asks for a REAL). */
const INTEGER_TOKEN = /-?\d+(?![.eE\d])/y;
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);
const SIXTEEN_DIGITS = /\d{16}/;

function refuseKey(key: string): never {
  throw new EngineError('BAD_REQUEST', {
    detail: `the key ${JSON.stringify(key)} is not accepted in a JSON body (it names object internals); rename it`,
  });
}

function refuseSurrogate(): never {
  throw new EngineError(
    'INVALID_UTF8',
    {},
    {
      details: {
        detail:
          'a string holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair): it has no UTF-8 form',
      },
    },
  );
}

function checkString(text: string): void {
  if (LONE_SURROGATE.test(text)) refuseSurrogate();
}

/** Walks the parsed body without recursion: a deeply nested body must not exhaust the stack. */
function checkValues(body: unknown): void {
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') checkString(value);
    else if (Array.isArray(value)) for (const item of value) pending.push(item);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, member] of Object.entries(value)) {
        if (PROTOTYPE_KEYS.has(key)) refuseKey(key);
        checkString(key);
        pending.push(member);
      }
    }
  }
}

/** The index just past the string that opens at `start` (the text is valid JSON). */
function skipString(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
  return at + 1;
}

/** The first integer literal outside ±(2^53 − 1), read from the raw text since JSON.parse has already rounded it. */
export function findInexactInteger(text: string): string | undefined {
  // An inexact integer has at least 16 digits in a row: a text without such a run needs no walk.
  if (!SIXTEEN_DIGITS.test(text)) return undefined;
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    if (char === '"') {
      at = skipString(text, at);
      continue;
    }
    if (char !== '-' && (char < '0' || char > '9')) {
      at++;
      continue;
    }
    INTEGER_TOKEN.lastIndex = at;
    const integer = INTEGER_TOKEN.exec(text)?.[0];
    // Up to 15 digits is always exact; only longer literals need the BigInt comparison.
    if (integer !== undefined && integer.replace('-', '').length > 15) {
      const value = BigInt(integer);
      if (value > MAX_EXACT || value < -MAX_EXACT) return integer;
    }
    at = skipNumber(text, at);
  }
  return undefined;
}

function skipNumber(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length && '0123456789.eE+-'.includes(text[at] as string)) at++;
  return at;
}

/**
 * Whether the parsed body can hold a lone surrogate or a key naming object
 * internals. The text was strict UTF-8, so a lone surrogate can only come
 * from a `\u` escape, and such a key is spelled out in the text or escaped:
 * a text with neither gives nothing to find, and the walk (a visit of every
 * value of a 100-statement batch) is skipped.
 */
function mayHoldRefusedValues(raw: string): boolean {
  return raw.includes('\\u') || PROTOTYPE_WORDS.some((word) => raw.includes(word));
}

/** Throws the 400 a parsed body deserves, if any; `raw` is the text it was parsed from. */
export function checkJsonBody(body: unknown, raw: string): void {
  if (mayHoldRefusedValues(raw)) checkValues(body);
  const inexact = findInexactInteger(raw);
  if (inexact !== undefined) {
    throw new EngineError('BAD_REQUEST', {
      detail: `the integer ${inexact} is beyond ±9007199254740991 and JSON numbers would round it: write it in the SQL text or send it as a string`,
    });
  }
}
