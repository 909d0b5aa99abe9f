/** Reading a journal file as the tests need it: its entries, decoded and checked. */
import fs from 'node:fs';
import { decodeLine, isHeader, type JournalEntry } from '../../journal/record';

/** The entries of one journal file (headers left out); every line's crc is checked. */
export function fileEntries(file: string): JournalEntry[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => decodeLine(line))
    .filter((line): line is JournalEntry => !isHeader(line));
}
