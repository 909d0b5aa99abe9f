import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { EntryLine, entryOf, sketchLine } from '../journal/entry-line';
import { JournalError, readJournal, readJournalLazily } from '../journal/reader';
import { JOURNAL_FORMAT, encodeLine, type JournalEntry } from '../journal/record';

const ACTIVE = 'statements.jsonl';
const TS = '2026-11-21T05:43:12.345Z';

const header = encodeLine({
  kind: 'header',
  format: JOURNAL_FORMAT,
  service: 'sqlscribe',
  version: '0.1.0',
  level: 'mod',
  betterSqlite3: '12.11.1',
  sqlite: '3.50.4',
  node: 'v20.20.2',
  tz: 'UTC',
  started: '2026-11-21T05:43:12.000Z',
});

function exec(seq: number, extra: Partial<JournalEntry> = {}): JournalEntry {
  return {
    seq,
    ts: TS,
    db: 'shop.db',
    session: null,
    kind: 'exec',
    sql: 'INSERT INTO t VALUES (?)',
    statements: [{ sql: 'INSERT INTO t VALUES (?)', params: [seq] }],
    ok: true,
    changes: 1,
    ms: 1,
    clock: 1_795_239_792_345,
    seed: '0123456789abcdef',
    ...extra,
  };
}

/** One of each kind a reader keeps as a line, and kinds it decodes at once. */
function mixed(): JournalEntry[] {
  return [
    { seq: 1, ts: TS, db: 'shop.db', session: null, kind: 'createdb', sql: null, ok: true, ms: 0 },
    exec(2),
    { seq: 3, ts: TS, db: 'shop.db', session: 's1', kind: 'begin', sql: null, ok: true, ms: 0 },
    exec(4, { session: 's1', db: 'shop.db' }),
    { seq: 5, ts: TS, db: 'shop.db', session: 's1', kind: 'commit', sql: null, ok: true, ms: 0 },
    exec(6, { db: 'we"ird.db' }),
    { seq: 7, ts: TS, db: 'copy.db', session: null, kind: 'copydb', sql: null, ok: true, ms: 0, from: 'shop.db' },
    exec(8, { db: null, ok: false, error: 'no such database', code: 2001 }),
    {
      seq: 9,
      ts: TS,
      db: 'shop.db',
      session: null,
      kind: 'void',
      sql: null,
      ok: false,
      ms: 0,
      voids: [2],
      error: 'disk full',
    },
    exec(10),
  ];
}

t.test('a lazy read gives the same entries as a whole read, the common kinds as lines', async (t) => {
  const text = header + mixed().map(encodeLine).join('');
  const active = path.join(t.testdir({ [ACTIVE]: text }), ACTIVE);
  const whole = await readJournal(active);
  const lazy = await readJournalLazily(active);
  t.same(lazy.entries.map(entryOf), whole.entries);
  t.same(lazy.headers, whole.headers);
  const kept = lazy.entries.filter((entry) => entry instanceof EntryLine).map((entry) => entry.seq);
  // A database name with an escape is decoded at once; so are the kinds others look ahead for, and the last line.
  t.same(kept, [2, 3, 4, 5, 8]);
  const line = lazy.entries[1] as EntryLine;
  t.same(
    [line.seq, line.ts, line.kind, line.db, line.from, line.voids],
    [2, TS, 'exec', 'shop.db', undefined, undefined],
  );
});

t.test('reads gzipped files lazily too', async (t) => {
  const text = header + [exec(1), exec(2), exec(3)].map(encodeLine).join('');
  const active = path.join(t.testdir({ 'statements.20261121-054312.1.jsonl.gz': zlib.gzipSync(text) }), ACTIVE);
  const lazy = await readJournalLazily(active);
  t.same(lazy.entries.map(entryOf), (await readJournal(active)).entries);
});

t.test('a damaged line is refused by the read, before any entry is used', async (t) => {
  const damaged = encodeLine(exec(2)).replace('"params":[2]', '"params":[7]');
  const active = path.join(
    t.testdir({ [ACTIVE]: header + encodeLine(exec(1)) + damaged + encodeLine(exec(3)) }),
    ACTIVE,
  );
  const error = await readJournalLazily(active).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  t.type(error, JournalError);
  t.match(error, { kind: 'corrupt', line: 3 });
});

t.test('a line with a valid checksum but a bad shape fails when it is decoded, naming file and line', async (t) => {
  const bad = encodeLine({ ...exec(2), seed: 'not a seed' });
  const active = path.join(t.testdir({ [ACTIVE]: header + encodeLine(exec(1)) + bad + encodeLine(exec(3)) }), ACTIVE);
  const lazy = await readJournalLazily(active);
  t.throws(() => entryOf(lazy.entries[1] as EntryLine), {
    name: 'EntryLineError',
    message: /statements\.jsonl:3: cannot be decoded: "seed"/,
  });
});

t.test('a line whose start says other than its JSON is refused when decoded', (t) => {
  const line = encodeLine(exec(5));
  const sketch = sketchLine(line, 'f', 1) as EntryLine;
  const tsStart = line.indexOf('"ts":"') + '"ts":"'.length;
  const lying = new EntryLine(6, tsStart, line.indexOf('"', tsStart), sketch.kind, sketch.db, sketch.text, 'f', 1);
  t.equal(lying.ts, TS);
  t.throws(() => lying.decode(), { name: 'EntryLineError' });
  t.equal(
    sketchLine(
      encodeLine({ seq: 1, ts: TS, db: 'x', session: null, kind: 'dropdb', sql: null, ok: true, ms: 0 }),
      'f',
      1,
    ),
    undefined,
    'a drop is not kept as a line',
  );
  t.end();
});
