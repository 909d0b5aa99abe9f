/**
 * Reading the fixed parts of a journal line from its bytes, with no string
 * made: a long replay reads every line's first fields and checksum, and a
 * string per field, or Buffer's own methods with their argument checks, cost
 * as much again as the reading.
 */

/** Whether `bytes` holds `prefix` at `at`. */
export function holdsAt(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at < 0 || at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** The value of the lowercase hex digits in bytes [at, at + length), or -1 when any is not one. */
export function lowerHexAt(bytes: Uint8Array, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) {
    const c = bytes[i] as number;
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (digit === -1) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** The unsigned decimal number at `at` (up to 16 digits) and where it ends; undefined when no digit is there. */
export function decimalAt(bytes: Uint8Array, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  let i = at;
  for (; i < end && i < at + 16; i++) {
    const digit = (bytes[i] as number) - 48;
    if (digit < 0 || digit > 9) break;
    value = value * 10 + digit;
  }
  return i === at ? undefined : { value, next: i };
}
