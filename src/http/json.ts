/**
 * JSON out, exact for 64-bit integers (decisions §2). Node 20 has no
 * JSON.rawJSON, so a value holding a bigint is written by a small serializer
 * of our own; everything else takes the native path.
 */

/** Thrown when JSON.stringify meets a RawJson, so that writeValue writes the value instead; made once (no stack to capture per response). */
const RAW_JSON_INSIDE: unique symbol = Symbol('RawJson inside');

/**
 * JSON text written elsewhere (the engine writes result rows once, see
 * ExecRequest.jsonRows), spliced into a response as it is.
 */
export class RawJson {
  constructor(readonly text: string) {}

  /** Node 20 has no JSON.rawJSON: JSON.stringify cannot splice text, so it hands over to writeValue. */
  toJSON(): never {
    throw RAW_JSON_INSIDE;
  }
}

function writeValue(value: unknown): string | undefined {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof RawJson) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => writeValue(item) ?? 'null').join(',')}]`;
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return writeValue(withToJson.toJSON());
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const text = writeValue(member);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error === RAW_JSON_INSIDE || (error instanceof TypeError && /BigInt/.test(error.message))) return writeValue(value) ?? 'null';
    throw error;
  }
}
