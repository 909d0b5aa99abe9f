/** Writing a journal by hand, as the writer would have left it: rotated files (gzipped or not) and an active file. */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { encodeLine, type JournalEntry, type JournalHeader } from '../../journal/record';

export function header(firstSeq: number): JournalHeader {
  return {
    kind: 'header',
    format: 1,
    service: 'sqlscribe',
    version: '0.1.0',
    level: 'all',
    betterSqlite3: '12.11.1',
    sqlite: '3.50.0',
    node: 'v20.19.0',
    tz: 'UTC',
    started: '2026-11-21T10:00:00.000Z',
    firstSeq,
  };
}

/** An exec entry at `seq`: ok, or failed with `code` (its class the thousands digit). */
export function execEntry(seq: number, db: string, code?: number): JournalEntry {
  const base = {
    seq,
    ts: new Date(Date.UTC(2026, 10, 21, 10, 0, seq)).toISOString(),
    db,
    session: null,
    kind: 'exec' as const,
    sql: 'INSERT INTO t VALUES (1)',
    statements: [{ sql: 'INSERT INTO t VALUES (1)' }],
    ms: 1,
  };
  if (code === undefined) return { ...base, ok: true, clock: 0, seed: '0123456789abcdef' };
  return { ...base, ok: false, code, class: Math.floor(code / 1000), error: `[SQ${code}] failed`, statement: 0 };
}

/** An ok exec entry at `seq` as one journal line, its SQL naming the seq (so that each line differs). */
export function execLine(seq: number): string {
  const entry: JournalEntry = {
    seq,
    ts: '2026-11-21T05:43:12.345Z',
    db: 'shop.db',
    session: null,
    kind: 'exec',
    sql: `INSERT INTO t VALUES (${seq})`,
    statements: [{ sql: `INSERT INTO t VALUES (${seq})` }],
    ok: true,
    changes: 1,
    ms: 1,
    clock: 1_795_239_792_345,
    seed: '0123456789abcdef',
  };
  return encodeLine(entry);
}

/** A journal file holding a header and `entries`, gzipped when its name ends in .gz. */
export function writeJournalFile(file: string, entries: readonly JournalEntry[], tail = ''): void {
  const first = entries[0]?.seq ?? 1;
  const text = encodeLine(header(first)) + entries.map((e) => encodeLine(e)).join('') + tail;
  fs.writeFileSync(file, file.endsWith('.gz') ? zlib.gzipSync(text) : text);
}
