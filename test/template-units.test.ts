/**
 * The pure parts of databases from a template: the names a copy request
 * asks for, the gate between copies and snapshot rounds, the templates a
 * one-database replay needs, and the journal lines of copies and resets.
 */
import t from 'tap';
import { EngineError } from '../src/errors';
import { copyNames, isCopyBody } from '../src/routes/request/copy-body';
import { CopyGate } from '../src/services/databases/copy-gate';
import { databasesNeeded } from '../replay/template-sources';
import { supersededSeqs } from '../replay/superseded-entries';
import { decodeLine, encodeLine, type JournalEntry } from '../journal/record';

function codeOf(work: () => unknown): number | undefined {
  try {
    work();
  } catch (error) {
    return error instanceof EngineError ? error.code : -1;
  }
  return undefined;
}

t.test('copy request bodies give the names asked for, or a coded 400', async (tt) => {
  tt.ok(isCopyBody({ db: 'a', from: 'b' }));
  tt.notOk(isCopyBody({ db: 'a' }), 'without from it is a plain create');
  tt.same(copyNames({ db: 'ana', from: 'c' }), ['ana']);
  tt.same(copyNames({ dbs: ['ana', 'ben'], from: 'c' }), ['ana', 'ben']);
  tt.same(copyNames({ prefix: 'st', count: 3, from: 'c' }), ['st-01', 'st-02', 'st-03']);
  tt.same(
    copyNames({ prefix: 'st', count: 100, from: 'c' }).slice(-2),
    ['st-099', 'st-100'],
    'padded to the width of the count',
  );
  tt.equal(
    codeOf(() => copyNames({ prefix: 'st', count: 101, from: 'c' })),
    1040,
  );
  tt.equal(
    codeOf(() => copyNames({ prefix: 'st', count: 1.5, from: 'c' })),
    1006,
  );
  tt.equal(
    codeOf(() => copyNames({ prefix: 'st', from: 'c' })),
    1006,
    'a prefix without a count',
  );
  tt.equal(
    codeOf(() => copyNames({ dbs: [], from: 'c' })),
    1006,
  );
  tt.equal(
    codeOf(() => copyNames({ dbs: 'ana', from: 'c' })),
    1006,
  );
  tt.equal(
    codeOf(() => copyNames({ db: 'a', dbs: ['b'], from: 'c' })),
    1006,
  );
  tt.equal(
    codeOf(() => copyNames({ from: 'c' })),
    1006,
  );
});

t.test('the copy gate lets copies run together and keeps snapshot rounds apart from them', async (tt) => {
  const gate = new CopyGate();
  const log: string[] = [];
  let finishCopy!: () => void;
  const copy = gate.copying(async () => {
    log.push('copy 1 starts');
    await new Promise<void>((resolve) => (finishCopy = resolve));
    log.push('copy 1 ends');
  });
  const second = gate.copying(async () => void log.push('copy 2 runs beside copy 1'));
  await second;
  const round = gate.snapshotting(async () => {
    log.push('round starts');
    await Promise.resolve();
    log.push('round ends');
  });
  await Promise.resolve();
  const late = gate.copying(async () => void log.push('copy 3 runs after the round'));
  await new Promise((resolve) => setImmediate(resolve));
  tt.same(
    log,
    ['copy 1 starts', 'copy 2 runs beside copy 1'],
    'the round waits for the copy under way, and the later copy for the round',
  );
  finishCopy();
  await Promise.all([copy, round, late]);
  tt.same(log, [
    'copy 1 starts',
    'copy 2 runs beside copy 1',
    'copy 1 ends',
    'round starts',
    'round ends',
    'copy 3 runs after the round',
  ]);
});

const entry = (seq: number, kind: JournalEntry['kind'], db: string, from?: string): JournalEntry => ({
  seq,
  ts: '2026-11-25T10:00:00.000Z',
  db,
  session: null,
  kind,
  sql: null,
  ok: true,
  ms: 0,
  ...(from === undefined ? {} : { from }),
});

t.test('a one-database replay needs the templates it was copied from, and theirs', async (tt) => {
  const entries = [
    entry(1, 'createdb', 'class.db'),
    entry(2, 'copydb', 'teacher.db', 'class.db'),
    entry(3, 'copydb', 'kid.db', 'teacher.db'),
    entry(4, 'createdb', 'other.db'),
    entry(5, 'copydb', 'unrelated.db', 'other.db'),
    entry(6, 'resetdb', 'kid.db', 'teacher.db'),
  ];
  tt.same([...databasesNeeded(entries, 'kid.db')].sort(), ['class.db', 'kid.db', 'teacher.db']);
  tt.same([...databasesNeeded(entries, 'other.db')], ['other.db'], 'a template does not need its copies');
});

t.test(
  'entries of a database before it is dropped or reset are superseded, unless a copy reads it first',
  async (tt) => {
    const exec = (seq: number, db: string): JournalEntry => ({
      ...entry(seq, 'exec', db),
      sql: 'x',
      statements: [{ sql: 'x' }],
      clock: 0,
      seed: '0000000000000000',
    });
    const entries = [
      entry(1, 'createdb', 'class.db'),
      exec(2, 'class.db'),
      entry(3, 'copydb', 'kid.db', 'class.db'),
      exec(4, 'kid.db'),
      exec(5, 'class.db'),
      entry(6, 'resetdb', 'kid.db', 'class.db'),
      exec(7, 'kid.db'),
      entry(8, 'dropdb', 'class.db'),
      entry(9, 'copydb', 'gone.db', 'kid.db'),
      entry(10, 'dropdb', 'gone.db'),
    ];
    tt.same(
      [...supersededSeqs(entries)].sort((a, b) => a - b),
      [3, 4, 9],
      'the copy and its write before the reset, and the copy dropped later; the template before the reset is read by it',
    );
    const readLate = [
      entry(1, 'createdb', 'a.db'),
      exec(2, 'a.db'),
      entry(3, 'copydb', 'b.db', 'a.db'),
      entry(4, 'dropdb', 'a.db'),
    ];
    tt.same([...supersededSeqs(readLate)], [], 'a template read by a copy before its drop keeps its entries');
  },
);

t.test('copydb and resetdb lines round-trip and need their template', async (tt) => {
  const copy = entry(7, 'copydb', 'kid.db', 'class.db');
  tt.same(decodeLine(encodeLine(copy)), copy);
  tt.same(decodeLine(encodeLine(entry(8, 'resetdb', 'kid.db', 'class.db'))).kind, 'resetdb');
  tt.throws(() => decodeLine(encodeLine(entry(9, 'copydb', 'kid.db'))), /"from" is required in a copydb entry/);
  tt.throws(() => decodeLine(encodeLine(entry(9, 'resetdb', 'kid.db'))), /"from" is required in a resetdb entry/);
});
