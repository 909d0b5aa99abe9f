import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { isJournalFile, journalFiles, rotatedName } from '../journal/naming';
import { JournalError, readFileLines, readJournal } from '../journal/reader';
import { JOURNAL_FORMAT, encodeLine, type JournalEntry, type JournalHeader } from '../journal/record';
import { execLine } from './helpers/journal-build';
import { requireWith } from './helpers/mock-require';

const ACTIVE = 'statements.jsonl';

function header(level: JournalHeader['level'] = 'mod', format = JOURNAL_FORMAT): string {
  return encodeLine({
    kind: 'header',
    format,
    service: 'sqlscribe',
    version: '0.1.0',
    level,
    betterSqlite3: '12.11.1',
    sqlite: '3.50.4',
    node: 'v20.20.2',
    tz: 'UTC',
    started: '2026-11-21T05:43:12.000Z',
  });
}

/** A journal file's text: a header, then entries `from`..`to`. */
function file(from: number, to: number): string {
  let text = header();
  for (let seq = from; seq <= to; seq++) text += execLine(seq);
  return text;
}

const gz = (text: string): Buffer => zlib.gzipSync(text);

/** Builds a journal directory and returns the active file's path. */
function journal(t: Test, files: Parameters<Test['testdir']>[0]): string {
  return path.join(t.testdir(files), ACTIVE);
}

async function journalError(t: Test, promise: Promise<unknown>): Promise<JournalError> {
  try {
    await promise;
  } catch (err) {
    t.type(err, JournalError);
    return err as JournalError;
  }
  t.fail('expected a JournalError');
  return new JournalError('corrupt', 'did not throw');
}

const seqs = (entries: ReadonlyArray<{ seq: number }>) => entries.map((e) => e.seq);

t.test('names rotated files in UTC with the generator index', async (t) => {
  const time = new Date(Date.UTC(2026, 10, 21, 5, 43, 12));
  t.equal(rotatedName(ACTIVE, time, 1), 'statements.20261121-054312.1.jsonl');
  t.equal(rotatedName(ACTIVE, time, 12, true), 'statements.20261121-054312.12.jsonl.gz');
  t.equal(
    rotatedName('/x/journal/statements.jsonl', time, 2),
    '/x/journal/statements.20261121-054312.2.jsonl',
    'keeps the directory',
  );
  t.equal(rotatedName('journal', time, 3), 'journal.20261121-054312.3', 'a name without an extension');
});

t.test('recognizes the active file and its rotated siblings only', async (t) => {
  const active = '/x/journal/statements.jsonl';
  for (const name of [
    ACTIVE,
    'statements.20261121-054312.1.jsonl',
    'statements.20261121-054312.10.jsonl.gz',
    '/x/journal/statements.jsonl',
  ]) {
    t.ok(isJournalFile(active, name), name);
  }
  for (const name of [
    'statements.jsonl.bak',
    'statements.jsonl.gz',
    'other.20261121-054312.1.jsonl',
    'statementsX20261121-054312.1.jsonl',
    'statements.2026-11-21.1.jsonl',
    'statements.20261121-054312.1.json',
    '/y/statements.jsonl',
  ]) {
    t.notOk(isJournalFile(active, name), name);
  }
});

t.test('lists the journal files that exist', async (t) => {
  const active = journal(t, {
    [ACTIVE]: '',
    'statements.20261121-054312.1.jsonl': '',
    'statements.20261121-054313.1.jsonl.gz': '',
    'notes.txt': '',
    'statements.20261121-054314.1.jsonl': { nested: '' },
  });
  const names = (await journalFiles(active)).map((f) => path.basename(f)).sort();
  t.same(
    names,
    ['statements.20261121-054312.1.jsonl', 'statements.20261121-054313.1.jsonl.gz', ACTIVE],
    'skips other files and directories',
  );
  t.same(await journalFiles('/no/such/dir/statements.jsonl'), []);
});

t.test('reads the lines of a file, saying which is last and whether it ended', async (t) => {
  const dir = t.testdir({ a: 'one\ntwo\n', b: 'one\ntwo', c: '', 'd.gz': gz('é\n\nx') });
  const lines = async (name: string) => {
    const out = [];
    for await (const { line, text, last, terminated } of readFileLines(path.join(dir, name)))
      out.push({ line, text, last, terminated });
    return out;
  };
  t.same(await lines('a'), [
    { line: 1, text: 'one', last: false, terminated: true },
    { line: 2, text: 'two', last: true, terminated: true },
  ]);
  t.same(await lines('b'), [
    { line: 1, text: 'one', last: false, terminated: true },
    { line: 2, text: 'two', last: true, terminated: false },
  ]);
  t.same(await lines('c'), []);
  t.same(
    (await lines('d.gz')).map((l) => l.text),
    ['é', '', 'x'],
    'gunzips',
  );
});

t.test('orders entries by seq across plain and gzipped files, not by name', async (t) => {
  // Index 10 sorts before index 2 by name, and the active file sorts last: seq order must win.
  const active = journal(t, {
    'statements.20261121-054312.10.jsonl': file(4, 6),
    'statements.20261121-054312.2.jsonl.gz': gz(file(1, 3)),
    'statements.20261121-054313.1.jsonl.gz': gz(file(7, 8)),
    [ACTIVE]: file(9, 10),
  });
  const contents = await readJournal(active);
  t.same(seqs(contents.entries), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.same(
    contents.files.map((f) => path.basename(f)),
    [
      'statements.20261121-054312.2.jsonl.gz',
      'statements.20261121-054312.10.jsonl',
      'statements.20261121-054313.1.jsonl.gz',
      ACTIVE,
    ],
  );
  t.same(
    contents.headers.map((h) => h.file),
    contents.files,
    'one header per file, in journal order',
  );
  t.equal(contents.headers[0]?.header.level, 'mod');
  t.same(contents.warnings, []);
});

t.test('reads lines that span read chunks', async (t) => {
  const big = 'x'.repeat(70_000); // longer than one 64 KiB read
  const text = file(1, 2000) + encodeLine({ ...JSON.parse(execLine(1)), seq: 2001, sql: big } as JournalEntry);
  const active = journal(t, { [ACTIVE]: text, 'statements.20261121-054312.1.jsonl.gz': gz(file(2002, 4000)) });
  const contents = await readJournal(active);
  t.equal(contents.entries.length, 4000);
  t.equal(contents.entries[2000]?.sql, big);
  t.same(contents.warnings, []);
});

t.test('tolerates and reports a torn last line', async (t) => {
  const torn = execLine(4).slice(0, 30);
  const active = journal(t, {
    'statements.20261121-054312.1.jsonl.gz': gz(file(1, 3) + torn),
    [ACTIVE]: file(4, 5) + execLine(6).replace('"seq":6', '"seq":7'),
  });
  const contents = await readJournal(active);
  t.same(seqs(contents.entries), [1, 2, 3, 4, 5]);
  t.equal(contents.warnings.length, 2);
  t.match(
    contents.warnings.join('\n'),
    /statements\.20261121-054312\.1\.jsonl\.gz: line 5 is torn \(no trailing newline\); ignored/,
  );
  t.match(contents.warnings.join('\n'), /statements\.jsonl: line 4 is torn \(checksum .*\); ignored/);
});

t.test('a complete last line without its newline is torn too', async (t) => {
  const active = journal(t, { [ACTIVE]: file(1, 2) + execLine(3).slice(0, -1) });
  const contents = await readJournal(active);
  t.same(seqs(contents.entries), [1, 2]);
  t.match(contents.warnings, [/line 4 is torn/]);
});

t.test('refuses a damaged line that is not the last, naming file and line', async (t) => {
  const active = journal(t, { [ACTIVE]: file(1, 2) + execLine(3).replace('"seq":3', '"seq":9') + execLine(4) });
  const err = await journalError(t, readJournal(active));
  t.equal(err.kind, 'corrupt');
  t.equal(err.file, active);
  t.equal(err.line, 4);
  t.match(err.message, /statements\.jsonl:4/);
});

t.test('refuses a blank line in the middle of a file', async (t) => {
  const active = journal(t, { [ACTIVE]: `${file(1, 2)}\n${execLine(3)}` });
  const err = await journalError(t, readJournal(active));
  t.equal(err.kind, 'corrupt');
  t.equal(err.line, 4);
});

t.test('refuses a last line with a valid checksum but a bad shape', async (t) => {
  const bad = encodeLine({ seq: 3 } as unknown as JournalEntry);
  const err = await journalError(t, readJournal(journal(t, { [ACTIVE]: file(1, 2) + bad })));
  t.equal(err.kind, 'corrupt');
  t.equal(err.line, 4);
});

t.test('refuses a truncated gzip file', async (t) => {
  const zipped = gz(file(1, 50));
  const active = journal(t, {
    'statements.20261121-054312.1.jsonl.gz': zipped.subarray(0, zipped.length - 20),
    [ACTIVE]: file(51, 52),
  });
  const err = await journalError(t, readJournal(active));
  t.equal(err.kind, 'corrupt');
  t.match(err.file, /\.gz$/);
});

t.test('refuses a journal written in a newer format', async (t) => {
  const err = await journalError(
    t,
    readJournal(journal(t, { [ACTIVE]: header('mod', JOURNAL_FORMAT + 1) + execLine(1) })),
  );
  t.equal(err.kind, 'corrupt');
  t.equal(err.line, 1);
});

t.test('warns about a file that does not begin with a header', async (t) => {
  const contents = await readJournal(journal(t, { [ACTIVE]: execLine(1) + execLine(2) }));
  t.same(seqs(contents.entries), [1, 2]);
  t.match(contents.warnings, [/does not begin with a header/]);
});

t.test('refuses a gap in seq, naming the missing range', async (t) => {
  const err = await journalError(
    t,
    readJournal(
      journal(t, {
        'statements.20261121-054312.1.jsonl': file(1, 3),
        [ACTIVE]: file(7, 8),
      }),
    ),
  );
  t.equal(err.kind, 'gap');
  t.match(err.message, /seq 4–6 are missing/);
  const one = await journalError(t, readJournal(journal(t, { [ACTIVE]: file(1, 1) + execLine(3) })));
  t.match(one.message, /seq 2 is missing/);
});

t.test('refuses a seq that appears twice', async (t) => {
  const err = await journalError(
    t,
    readJournal(
      journal(t, {
        'statements.20261121-054312.1.jsonl': file(1, 3),
        [ACTIVE]: file(3, 4),
      }),
    ),
  );
  t.equal(err.kind, 'duplicate');
  t.match(err.message, /seq 3 appears twice/);
});

t.test('the journal may start at any seq', async (t) => {
  const contents = await readJournal(journal(t, { [ACTIVE]: file(41, 43) }));
  t.same(seqs(contents.entries), [41, 42, 43], 'older files removed by retention are no gap');
});

t.test('with fromSeq, drops earlier entries before checking for gaps', async (t) => {
  const active = journal(t, {
    'statements.20261121-054312.1.jsonl': file(1, 3),
    'statements.20261121-054312.2.jsonl': file(6, 8),
    [ACTIVE]: file(9, 10),
  });
  t.same(seqs((await readJournal(active, { fromSeq: 6 })).entries), [6, 7, 8, 9, 10]);
  t.same(seqs((await readJournal(active, { fromSeq: 8 })).entries), [8, 9, 10]);
  t.same(seqs((await readJournal(active, { fromSeq: 11 })).entries), []);
  const err = await journalError(t, readJournal(active, { fromSeq: 2 }));
  t.equal(err.kind, 'gap', 'a gap at or after fromSeq still counts');
  t.match(err.message, /seq 4–5 are missing/);
});

t.test('refuses a missing journal', async (t) => {
  const empty = await journalError(t, readJournal(journal(t, { 'notes.txt': 'x' })));
  t.equal(empty.kind, 'missing');
  const noDir = await journalError(t, readJournal(path.join(t.testdir({}), 'nope', ACTIVE)));
  t.equal(noDir.kind, 'missing');
});

t.test('reads rotated files when the active file is gone', async (t) => {
  const active = journal(t, { 'statements.20261121-054312.1.jsonl': file(1, 2) });
  t.notOk(fs.existsSync(active));
  t.same(seqs((await readJournal(active)).entries), [1, 2]);
});

t.test('a rotated file removed between listing and reading (retention) makes the read start over', async (t) => {
  const dir = t.testdir({ 'statements.20261121-054312.1.jsonl': file(1, 3), [ACTIVE]: file(4, 5) });
  const active = path.join(dir, ACTIVE);
  const ghost = path.join(dir, 'statements.20261121-054311.1.jsonl');
  const naming = await import('../journal/naming');
  let listings = 0;
  // The first listing still names a file that retention has removed by the time it is opened.
  const { readJournal: read } = requireWith<typeof import('../journal/reader')>(__filename, '../journal/reader', {
    '../journal/naming': {
      ...naming,
      journalFiles: async (a: string) =>
        listings++ === 0 ? [ghost, ...(await naming.journalFiles(a))] : naming.journalFiles(a),
    },
  });
  const contents = await read(active);
  t.same(seqs(contents.entries), [1, 2, 3, 4, 5], 'the second reading is whole');
  t.equal(listings, 2, 'the files were listed again');

  const { readJournal: readAlwaysGone } = requireWith<typeof import('../journal/reader')>(
    __filename,
    '../journal/reader',
    {
      '../journal/naming': { ...naming, journalFiles: async (a: string) => [ghost, ...(await naming.journalFiles(a))] },
    },
  );
  // The mocked reader is a module of its own, with its own JournalError class: compared by name.
  const error = (await readAlwaysGone(active).then(
    () => undefined,
    (err: unknown) => err,
  )) as { name?: string; kind?: string; message?: string } | undefined;
  t.equal(error?.name, 'JournalError');
  t.equal(error?.kind, 'corrupt', 'a file that keeps vanishing is reported, after a few tries');
  t.match(error?.message, /cannot be read: ENOENT/);
});
