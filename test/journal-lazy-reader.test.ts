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
  const bytes = Buffer.from(line);
  const end = bytes.length - 1;
  const sketch = sketchLine(bytes, 0, end, 'f', 1) as EntryLine;
  t.equal(sketch.seq, 5);
  t.equal(sketch.text, line.trimEnd());
  const tsStart = line.indexOf('"ts":"') + '"ts":"'.length;
  const lying = new EntryLine(6, tsStart, line.indexOf('"', tsStart), sketch.kind, sketch.db, bytes, 0, end, 'f', 1);
  t.equal(lying.ts, TS);
  t.throws(() => lying.decode(), { name: 'EntryLineError' });
  const drop = Buffer.from(
    encodeLine({ seq: 1, ts: TS, db: 'x', session: null, kind: 'dropdb', sql: null, ok: true, ms: 0 }),
  );
  t.equal(sketchLine(drop, 0, drop.length - 1, 'f', 1), undefined, 'a drop is not kept as a line');
  t.end();
});

t.test('lines cut by the read chunks, with multi-byte text, read as they were written', async (t) => {
  // About 3 MiB of lines of many lengths, so that lines and multi-byte characters fall across the 1 MiB reads.
  const entries: JournalEntry[] = [];
  for (let seq = 1; seq <= 700; seq++) {
    const text = `é€😀 ${'x'.repeat((seq * 7919) % 9000)} ${seq}`;
    entries.push(
      exec(seq, { sql: 'INSERT INTO t VALUES (?)', statements: [{ sql: 'INSERT INTO t VALUES (?)', params: [text] }] }),
    );
  }
  const body = header + entries.map((entry) => encodeLine(entry)).join('');
  t.ok(body.length > 3 * 1024 * 1024);
  const active = path.join(
    t.testdir({ [ACTIVE]: body, gz: { 'statements.20261121-054312.1.jsonl.gz': zlib.gzipSync(body) } }),
    ACTIVE,
  );
  for (const file of [active, path.join(path.dirname(active), 'gz', ACTIVE)]) {
    const lazy = await readJournalLazily(file);
    t.equal(lazy.entries.length, entries.length);
    // The file's last line is decoded at once (it may be torn); the others are kept as lines.
    t.ok(
      lazy.entries.slice(0, -1).every((entry) => entry instanceof EntryLine),
      'every other line kept undecoded',
    );
    t.same(lazy.entries.map(entryOf), entries, `${path.basename(path.dirname(file))}: every entry as written`);
  }
});

t.test('a database name that is not plain ASCII is decoded whole, and read right', async (t) => {
  const named = exec(1, { db: 'café.db' });
  const line = Buffer.from(encodeLine(named));
  t.equal(sketchLine(line, 0, line.length - 1, 'f', 1), undefined);
  const active = path.join(t.testdir({ [ACTIVE]: header + line.toString() + encodeLine(exec(2)) }), ACTIVE);
  const lazy = await readJournalLazily(active);
  t.same(lazy.entries.map(entryOf), [named, exec(2)]);
  t.equal(lazy.entries[0]?.db, 'café.db');
});

t.test('a damaged checksum is found at the read, in the bytes', async (t) => {
  const good = encodeLine(exec(2));
  const damaged = good.replace('"crc":"', '"crc":"0').replace(/"crc":"(.{8}).*"\}/, '"crc":"$1"}');
  const flipped = good.replace('INSERT', 'INSERU');
  for (const [why, bad] of [
    ['a sum that does not match', flipped],
    ['a sum that is not hex', good.replace(/"crc":"[0-9a-f]{8}"/, '"crc":"zzzzzzzz"')],
    ['a line cut before its sum', good.slice(0, -25) + '\n'],
    ['a changed sum', damaged],
  ] as const) {
    const active = path.join(t.testdir({ [ACTIVE]: header + encodeLine(exec(1)) + bad + encodeLine(exec(3)) }), ACTIVE);
    const error = await readJournalLazily(active).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    t.type(error, JournalError, why);
    t.match(error, { kind: 'corrupt', line: 3 }, why);
  }
});
