/**
 * The guard for `notes_without_personal_data` and `incidents`:
 * e-mail addresses, phone numbers and national identity numbers are refused,
 * by kind, and never echoed back.
 */

export type PersonalDataKind = 'e-mail address' | 'phone number' | 'national identity number';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/;
// Chilean RUT (12.345.678-9, 12345678-K), Spanish DNI/NIE (12345678Z, X1234567L), Argentine DNI (12.345.678).
const NATIONAL_ID = /\b\d{1,2}\.?\d{3}\.?\d{3}-[\dkK]\b|\b[XYZ]?\d{7,8}[A-HJ-NP-TV-Z]\b|\b\d{2}\.\d{3}\.\d{3}\b/g;

/** Nine digits or more (or eight after a +), with the usual separators: long enough not to be a date or a count. */
const PHONE = /(?:\+\s?\d|\(?\d)[\d\s().-]{6,}\d/g;

/**
 * Digits that are not a phone: calendar dates (2026-11-20), clock times (10:30) and commit-like
 * hexadecimal words (a1b2c3d, 40-character hashes). Taken out before looking for phones, so that
 * a date next to a time or a count ("2026-11-20 10:30") is not read as one long number.
 */
const NOT_PHONE = /\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}(?::\d{2})?\b|\b(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/g;

function hasPhone(text: string): boolean {
  for (const match of text.matchAll(PHONE)) {
    const digits = match[0].replace(/\D/g, '').length;
    if (digits >= 9 || (match[0].startsWith('+') && digits >= 8)) return true;
  }
  return false;
}

/** The kinds of personal data found in the texts, in a fixed order; empty when none. */
export function findPersonalData(texts: readonly string[]): PersonalDataKind[] {
  const found = new Set<PersonalDataKind>();
  for (const text of texts) {
    if (EMAIL.test(text)) found.add('e-mail address');
    const withoutIds = text.replace(NATIONAL_ID, ' ');
    if (withoutIds !== text) found.add('national identity number');
    // An identity number also looks like a long number: it is reported once, as what it is.
    if (hasPhone(withoutIds.replace(NOT_PHONE, ' ; '))) found.add('phone number');
  }
  return (['e-mail address', 'phone number', 'national identity number'] as const).filter((kind) => found.has(kind));
}
