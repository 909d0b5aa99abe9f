/**
 * CSV as RFC 4180 writes it (https://www.rfc-editor.org/rfc/rfc4180): fields
 * separated by commas, records by CRLF or LF, a field in double quotes may hold
 * commas, line breaks and doubled quotes. One rule of ours on top: an empty
 * field written without quotes is NULL, `""` is the empty string, so that
 * export and import round trip both.
 */
import { EngineError } from '../../errors';

/** A field: its text, or null for an empty field written without quotes. */
export type CsvField = string | null;

function invalid(line: number, detail: string): EngineError {
  return new EngineError('IMPORT_CSV_INVALID', { line, detail });
}

interface Cursor {
  readonly text: string;
  pos: number;
  line: number;
}

function isBreak(c: string | undefined): boolean {
  return c === '\n' || c === '\r';
}

function quotedField(at: Cursor): string {
  const { text } = at;
  let value = '';
  at.pos++;
  for (;;) {
    const quote = text.indexOf('"', at.pos);
    if (quote === -1) throw invalid(at.line, 'a quoted field is never closed');
    const part = text.slice(at.pos, quote);
    value += part;
    at.line += part.split('\n').length - 1;
    at.pos = quote + 1;
    if (text[at.pos] !== '"') break;
    value += '"';
    at.pos++;
  }
  if (at.pos < text.length && text[at.pos] !== ',' && !isBreak(text[at.pos]))
    throw invalid(at.line, 'text after a closing quote');
  return value;
}

function plainField(at: Cursor): CsvField {
  const { text } = at;
  let end = at.pos;
  while (end < text.length && text[end] !== ',' && !isBreak(text[end])) end++;
  const raw = text.slice(at.pos, end);
  if (raw.includes('"')) throw invalid(at.line, 'a quote inside a field that does not start with one');
  at.pos = end;
  return raw === '' ? null : raw;
}

/** The records of a CSV text; every record must have as many fields as the first (the header). */
export function parseCsv(source: string): CsvField[][] {
  const text = (source.charCodeAt(0) === 0xfeff ? source.slice(1) : source).replace(/[\r\n]+$/, '');
  const records: CsvField[][] = [];
  if (text === '') return records;
  const at: Cursor = { text, pos: 0, line: 1 };
  let record: CsvField[] = [];
  for (;;) {
    record.push(text[at.pos] === '"' ? quotedField(at) : plainField(at));
    if (text[at.pos] === ',') {
      at.pos++;
      continue;
    }
    const width = records[0]?.length;
    if (width !== undefined && record.length !== width)
      throw invalid(at.line, `${record.length} fields where the header has ${width}`);
    records.push(record);
    record = [];
    if (at.pos >= text.length) return records;
    if (text[at.pos] === '\r') at.pos++;
    if (text[at.pos] === '\n') at.pos++;
    at.line++;
  }
}

/** One field as CSV: quoted when it must be, and always when empty (an empty unquoted field is NULL). */
export function csvField(value: CsvField): string {
  if (value === null) return '';
  if (value === '' || /[",\r\n]/.test(value) || value !== value.trim()) return `"${value.replace(/"/g, '""')}"`;
  return value;
}

export function csvRecord(values: readonly CsvField[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
