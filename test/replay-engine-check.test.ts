/** Which journal files replay must have been written by its own engine: those holding the entries it applies. */
import t from 'tap';
import type { JournalHeader } from '../journal/record';
import { engineMismatches } from '../replay/engine-check';
import { execEntry } from './helpers/journal-build';

const here = { betterSqlite3: '13.2.0', sqlite: '3.54.1', tz: 'UTC' };
function header(firstSeq: number | undefined, engine: Partial<typeof here>): JournalHeader {
  return {
    kind: 'header',
    format: 1,
    service: 'sqlscribe',
    version: '0.1.0',
    level: 'mod',
    node: 'v24',
    started: '2026-11-26T00:00:00.000Z',
    ...here,
    ...engine,
    ...(firstSeq === undefined ? {} : { firstSeq }),
  };
}
const headers = [
  { file: 'a.1.jsonl', header: header(1, { betterSqlite3: '12.11.1', sqlite: '3.53.2' }) },
  { file: 'a.2.jsonl', header: header(11, { betterSqlite3: '12.11.1', sqlite: '3.53.2' }) },
  { file: 'a.jsonl', header: header(21, {}) },
];
const seqs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => execEntry(from + i, 'a.db'));

t.test('only files that hold an applied entry count', async (tt) => {
  tt.same(engineMismatches(headers, seqs(21, 30), here), [], 'after the upgrade: the old files are not read');
  tt.same(engineMismatches(headers, [], here), []);
  const before = engineMismatches(headers, seqs(12, 25), here);
  tt.same(
    before.map((m) => m.file),
    ['a.2.jsonl'],
    'the file holding seqs 12-20',
  );
  tt.equal(before[0]?.detail, 'betterSqlite3 12.11.1 there, 13.2.0 here; sqlite 3.53.2 there, 3.54.1 here');
  tt.same(
    engineMismatches(headers, seqs(1, 30), here).map((m) => m.file),
    ['a.1.jsonl', 'a.2.jsonl'],
  );
});

t.test('a file without firstSeq (an older format) may hold anything, so it always counts', async (tt) => {
  const old = [{ file: 'old.jsonl', header: header(undefined, { tz: 'Europe/Berlin' }) }, ...headers.slice(2)];
  tt.same(
    engineMismatches(old, seqs(25, 26), here).map((m) => m.detail),
    ['tz Europe/Berlin there, UTC here'],
  );
});
