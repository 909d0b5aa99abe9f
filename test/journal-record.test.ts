import zlib from 'node:zlib';
import t from 'tap';
import {
  JOURNAL_FORMAT,
  JournalLineError,
  crc32Fallback,
  crcOf,
  decodeLine,
  encodeLine,
  isHeader,
  type JournalEntry,
  type JournalHeader,
  type JournalLine,
} from '../journal/record';

const header: JournalHeader = {
  kind: 'header',
  format: JOURNAL_FORMAT,
  service: 'sqlscribe',
  version: '0.1.0',
  level: 'mod',
  betterSqlite3: '12.11.1',
  sqlite: '3.50.4',
  node: 'v20.20.2',
  tz: 'Europe/Berlin',
  started: '2026-11-21T05:43:12.000Z',
};

function entry(fields: Partial<JournalEntry>): JournalEntry {
  return {
    seq: 1,
    ts: '2026-11-21T05:43:12.345Z',
    db: 'shop.db',
    session: null,
    kind: 'exec',
    sql: null,
    ok: true,
    ms: 0.4,
    ...fields,
  };
}

const exec = entry({
  kind: 'exec',
  sql: 'INSERT INTO t VALUES (?, ?);\nSELECT :x',
  changes: 1,
  readonly: false,
  statements: [
    { sql: 'INSERT INTO t VALUES (?, ?)', params: [1, 'a'] },
    { sql: 'SELECT :x', params: { x: null } },
  ],
  clock: 1795239792345,
  seed: '0123456789abcdef',
});

const everyKind: Record<string, JournalLine> = {
  header,
  exec,
  'failed exec': entry({
    seq: 2,
    sql: 'INSERT INTO nope VALUES (1)',
    statements: [{ sql: 'INSERT INTO nope VALUES (1)' }],
    ok: false,
    code: 2001,
    class: 2,
    error: '[SQ2001] no such table: nope',
    statement: 0,
    clock: 1,
    seed: 'ffffffffffffffff',
  }),
  begin: entry({ seq: 3, kind: 'begin', session: 's1', sql: 'BEGIN' }),
  commit: entry({ seq: 4, kind: 'commit', session: 's1', sql: 'COMMIT' }),
  rollback: entry({ seq: 5, kind: 'rollback', session: 's1', sql: null, reason: 'expired' }),
  createdb: entry({ seq: 6, kind: 'createdb', db: 'new.db', sql: null }),
  dropdb: entry({ seq: 7, kind: 'dropdb', db: 'new.db', sql: 'DROP DATABASE new' }),
  'dropdb by a token': entry({
    seq: 8,
    kind: 'dropdb',
    db: 'new.db',
    sql: 'DROP DATABASE new',
    tokenId: 'tok_0123456789ab',
    tokenName: 'teacher',
  }),
  refused: entry({
    seq: 9,
    kind: 'refused',
    db: 'alumno-06.db',
    sql: null,
    ok: false,
    code: 1031,
    class: 1,
    error: '[SQ1031] token alumno-05 may not use database alumno-06.db',
    tokenId: 'tok_0123456789ab',
    tokenName: 'alumno-05',
    client: '127.0.0.1',
    request: 'POST /exec',
  }),
  'refused without a token': entry({
    seq: 10,
    kind: 'refused',
    db: null,
    sql: null,
    ok: false,
    code: 1012,
    class: 1,
    error: '[SQ1012] missing or wrong token',
    client: '::1',
    request: 'GET /dbs',
  }),
};

/** A line with a valid checksum around any JSON text, to reach the shape checks. */
function signed(value: unknown): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"crc":"${crcOf(json)}"}\n`;
}

function reasonOf(text: string): string | undefined {
  try {
    decodeLine(text);
  } catch (err) {
    if (err instanceof JournalLineError) return err.reason;
    throw err;
  }
  return undefined;
}

t.test('round-trips every kind of line', async (t) => {
  for (const [name, line] of Object.entries(everyKind)) {
    const text = encodeLine(line);
    t.ok(text.endsWith('}\n'), `${name}: ends with the object and a newline`);
    t.equal(text.indexOf('\n'), text.length - 1, `${name}: is one line`);
    t.same(decodeLine(text), line, `${name}: decodes to what was encoded`);
    t.same(decodeLine(text.slice(0, -1)), line, `${name}: decodes without its newline too`);
    t.notOk('crc' in decodeLine(text), `${name}: the crc is not part of the decoded line`);
  }
});

t.test('tells headers from entries', async (t) => {
  t.ok(isHeader(decodeLine(encodeLine(header))));
  t.notOk(isHeader(decodeLine(encodeLine(exec))));
});

t.test('appends the CRC-32 of the JSON text as the last field', async (t) => {
  const json = JSON.stringify(decodeLine(encodeLine(exec)));
  const crc = /,"crc":"([0-9a-f]{8})"\}\n$/.exec(encodeLine(exec));
  t.ok(crc, 'crc is 8 lowercase hex digits before the final brace');
  t.equal(crc?.[1], zlib.crc32(json).toString(16).padStart(8, '0'));
  t.equal(encodeLine(exec), `${json.slice(0, -1)},"crc":"${crc?.[1]}"}\n`);
});

t.test('the fallback CRC-32 agrees with zlib', async (t) => {
  t.equal(crc32Fallback('123456789'), 0xcbf43926, 'the standard check value');
  // Labels stay ASCII: a raw U+2028 in an assertion name breaks the TAP stream.
  const texts: Record<string, string> = {
    empty: '',
    'one byte': 'a',
    'a journal line': encodeLine(exec),
    'multi-byte UTF-8': 'é€😀\u2028',
  };
  for (const [name, text] of Object.entries(texts)) t.equal(crc32Fallback(text), zlib.crc32(text), name);
});

t.test('keeps any text intact, including separators and lone surrogates', async (t) => {
  const odd = entry({
    ...exec,
    sql: "SELECT 'a\nb\r\u2028\u2029😀\ud800'",
    statements: [{ sql: 'x', params: ['\n', '\ud800', 'é'] }],
  });
  const text = encodeLine(odd);
  t.equal(text.indexOf('\n'), text.length - 1, 'newlines inside strings are escaped');
  t.same(decodeLine(text), odd);
});

t.test('the checksum catches any changed byte', async (t) => {
  const text = encodeLine(exec).slice(0, -1);
  let caught = 0;
  for (let i = 0; i < text.length; i++) {
    const changed = text.slice(0, i) + (text[i] === 'x' ? 'y' : 'x') + text.slice(i + 1);
    const reason = reasonOf(changed);
    if (reason === 'checksum' || reason === 'json') caught++;
  }
  t.equal(caught, text.length, 'every one-byte change is refused');
  t.equal(reasonOf(text.replace('"seq":1', '"seq":2')), 'checksum', 'a changed value is a checksum error');
});

t.test('a line without a checksum is a checksum error; a broken one a json error', async (t) => {
  t.equal(reasonOf(`${JSON.stringify(exec)}\n`), 'checksum');
  t.equal(reasonOf(encodeLine(exec).slice(0, 40)), 'json', 'a torn line');
  t.equal(reasonOf(''), 'json');
  t.equal(reasonOf('[1,2]'), 'checksum', 'JSON that is not an object has no checksum either');
  t.equal(reasonOf('\n'), 'json');
});

t.test('refuses lines of the wrong shape', async (t) => {
  const bad: Record<string, unknown> = {
    'no seq': { ...exec, seq: undefined },
    'a negative seq': { ...exec, seq: -1 },
    'a fractional seq': { ...exec, seq: 1.5 },
    'a string ms': { ...exec, ms: '3' },
    'a bad ts': { ...exec, ts: 'yesterday' },
    'an unknown kind': { ...exec, kind: 'vacuum' },
    'no kind': { ...exec, kind: undefined },
    'a boolean sql': { ...exec, sql: true },
    'an exec without statements': { ...exec, statements: undefined },
    'an exec with a non-scalar param': { ...exec, statements: [{ sql: 'x', params: [[1]] }] },
    'an exec with statements that are strings': { ...exec, statements: ['SELECT 1'] },
    'a successful exec without clock': { ...exec, clock: undefined },
    'a successful exec without seed': { ...exec, seed: undefined },
    'a short seed': { ...exec, seed: 'abc' },
    'a failure without error': { ...everyKind['failed exec'], error: undefined },
    'a rollback without reason': { ...everyKind['rollback'], reason: undefined },
    'a refused entry without its client': { ...everyKind['refused'], client: undefined },
    'a refused entry without its code': { ...everyKind['refused'], code: undefined },
    'a rollback with an unknown reason': { ...everyKind['rollback'], reason: 'bored' },
    'a begin without session': { ...everyKind['begin'], session: null },
    'a createdb without db': { ...everyKind['createdb'], db: null },
    'a header of another service': { ...header, service: 'other' },
    'a header with an unknown level': { ...header, level: 'verbose' },
    'a header without tz': { ...header, tz: undefined },
    'a header with format 0': { ...header, format: 0 },
    'a header with firstSeq 0': { ...header, firstSeq: 0 },
    'a header with a fractional firstSeq': { ...header, firstSeq: 1.5 },
    'a header with a string firstSeq': { ...header, firstSeq: '7' },
    'a numeric tokenId': { ...exec, tokenId: 7 },
    'a null tokenName': { ...exec, tokenName: null },
  };
  for (const [name, value] of Object.entries(bad)) t.equal(reasonOf(signed(value)), 'shape', name);
});

t.test("a header may say the seq of its file's first entry, and older headers without it still read", async (t) => {
  const withFirst = decodeLine(encodeLine({ ...header, firstSeq: 42 }));
  t.ok(isHeader(withFirst) && withFirst.firstSeq === 42);
  t.match(
    encodeLine({ ...header, firstSeq: 42 }),
    /"started":"[^"]+","firstSeq":42,"crc"/,
    'written with the header fields',
  );
  const without = decodeLine(encodeLine(header));
  t.ok(isHeader(without) && without.firstSeq === undefined);
});

t.test('accepts fields a later format adds, and keeps them', async (t) => {
  const line = decodeLine(signed({ ...exec, replica: 'b' }));
  t.equal((line as unknown as Record<string, unknown>)['replica'], 'b');
  t.match(encodeLine(line), /,"replica":"b","crc":"[0-9a-f]{8}"\}\n$/, 'written after the known fields');
  t.equal(encodeLine(decodeLine(encodeLine(line))), encodeLine(line), 're-encodes to the same bytes');
});

t.test('the token that ran an entry is written beside its db and session', async (t) => {
  t.match(
    encodeLine(everyKind['dropdb by a token']!),
    /"db":"new\.db","session":null,"tokenId":"tok_0123456789ab","tokenName":"teacher","ok":true/,
  );
});

t.test('encodes deterministically, whatever the order of the keys', async (t) => {
  const reversed = Object.fromEntries(Object.entries(exec).reverse()) as unknown as JournalEntry;
  t.equal(encodeLine(reversed), encodeLine(exec), 'key order does not matter');
  t.equal(encodeLine(decodeLine(encodeLine(exec))), encodeLine(exec), 'a decoded line re-encodes to the same bytes');
  t.equal(encodeLine({ ...exec, error: undefined }), encodeLine(exec), 'undefined fields are left out');
  const withCrc = { ...exec, crc: '00000000' } as unknown as JournalEntry;
  t.equal(encodeLine(withCrc), encodeLine(exec), 'a stray crc field is not written twice');
});

t.test('an entry with several faults is refused for the first field in the documented order', (t) => {
  const base = {
    seq: 7,
    ts: '2026-11-21T05:43:12.345Z',
    db: 'a.db',
    session: null,
    kind: 'exec',
    sql: 'SELECT 1',
    statements: [{ sql: 'SELECT 1' }],
    ok: true,
    ms: 1,
    clock: 1,
    seed: '0123456789abcdef',
  };
  const refusal = (line: Record<string, unknown>): string => {
    try {
      decodeLine(encodeLine(line as unknown as JournalEntry));
    } catch (error) {
      return (error as Error).message;
    }
    return 'decoded';
  };
  t.equal(
    refusal({ ...base, seed: 'no', ms: undefined }),
    '"ms" is missing',
    'a missing required field before a bad optional one',
  );
  t.equal(
    refusal({ ...base, seed: 'no', changes: -1 }),
    '"changes" has the wrong type or value',
    'optional fields in their declared order',
  );
  t.equal(refusal({ ...base, ts: 'yesterday', db: 3 }), '"ts" has the wrong type or value');
  t.equal(refusal({ ...base, ts: '2026-11-21T05:43:12.346Z' }), 'decoded', 'a valid line after the refusals');
  t.end();
});
