/** Reading from a seq: whole files and lines below it are skipped, and a journal may start above seq 1. */
import path from 'node:path';
import t, { type Test } from 'tap';
import { JournalError, leadingSeq, readJournal } from '../journal/reader';
import { encodeLine } from '../journal/record';
import { execLine } from './helpers/journal-build';

function header(firstSeq?: number): string {
  return encodeLine({
    kind: 'header',
    format: 1,
    service: 'sqlscribe',
    version: '0.1.0',
    level: 'mod',
    betterSqlite3: '12.11.1',
    sqlite: '3.50.4',
    node: 'v20.20.2',
    tz: 'UTC',
    started: '2026-11-21T05:43:12.000Z',
    ...(firstSeq === undefined ? {} : { firstSeq }),
  });
}

/** An entry line whose checksum no longer matches: decoding it fails. */
function damaged(seq: number): string {
  return execLine(seq).replace('INSERT', 'UPSERT');
}

function entries(from: number, to: number): string {
  let text = '';
  for (let seq = from; seq <= to; seq++) text += execLine(seq);
  return text;
}

function journal(t: Test, files: Record<string, string>): string {
  return path.join(t.testdir(files), 'statements.jsonl');
}

const ROTATED_1 = 'statements.20261121-054312.1.jsonl';
const ROTATED_2 = 'statements.20261121-054312.2.jsonl';

t.test('leadingSeq reads the seq an entry line begins with, and nothing else', async (t) => {
  t.equal(leadingSeq(execLine(123456).trimEnd()), 123456);
  t.equal(leadingSeq(header(3).trimEnd()), undefined);
  t.equal(leadingSeq('{"seq":12'), undefined, 'a cut line');
  t.equal(leadingSeq('{"seq":-1,'), undefined);
});

t.test('a file whose header shows it ends below fromSeq is not read', async (t) => {
  const file = journal(t, {
    // Damage in the first file would stop any read of it.
    [ROTATED_1]: header(1) + entries(1, 4) + damaged(5) + entries(6, 10),
    [ROTATED_2]: header(11) + entries(11, 20),
    'statements.jsonl': header(21) + entries(21, 25),
  });
  const contents = await readJournal(file, { fromSeq: 15 });
  t.same(
    contents.entries.map((e) => e.seq),
    [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
  );
  t.equal(contents.firstSeq, 1, "the first seq held comes from the skipped file's header");
  t.equal(contents.headers.length, 3, "every file's header is still reported");
  const whole = await readJournal(file).catch((error: unknown) => error);
  t.type(whole, JournalError, 'a full read does read the damaged file');
});

t.test('lines below fromSeq are skipped without decoding', async (t) => {
  const file = journal(t, { 'statements.jsonl': header() + entries(1, 3) + damaged(4) + entries(5, 9) });
  const contents = await readJournal(file, { fromSeq: 5 });
  t.same(
    contents.entries.map((e) => e.seq),
    [5, 6, 7, 8, 9],
  );
  t.equal(contents.firstSeq, 1);
  await t.rejects(readJournal(file, { fromSeq: 4 }), JournalError, 'the damaged line itself is decoded when asked for');
});

t.test('files without a first seq in their header are still read', async (t) => {
  const file = journal(t, {
    [ROTATED_1]: header() + entries(1, 10),
    'statements.jsonl': header(11) + entries(11, 12),
  });
  const contents = await readJournal(file, { fromSeq: 8 });
  t.same(
    contents.entries.map((e) => e.seq),
    [8, 9, 10, 11, 12],
  );
  t.same(
    contents.files.map((f) => path.basename(f)),
    [ROTATED_1, 'statements.jsonl'],
  );
});

t.test('a journal whose oldest files were removed starts above seq 1', async (t) => {
  const file = journal(t, {
    [ROTATED_2]: header(11) + entries(11, 20),
    'statements.jsonl': header(21) + entries(21, 22),
  });
  const all = await readJournal(file);
  t.equal(all.firstSeq, 11);
  t.equal(all.entries[0]?.seq, 11);
  const tail = await readJournal(file, { fromSeq: 5 });
  t.equal(tail.entries.length, 12, 'reading from below the first seq held is no gap');
});

t.test('gaps and duplicates are still refused', async (t) => {
  const gap = journal(t, {
    [ROTATED_1]: header(1) + entries(1, 10),
    'statements.jsonl': header(14) + entries(14, 20),
  });
  const error = (await readJournal(gap, { fromSeq: 12 }).catch((e: unknown) => e)) as JournalError;
  t.equal(error.kind, 'gap', 'the seq asked for is missing while the journal holds seqs on both sides');
  t.match(error.message, /seq 12–13 are missing/);
  t.equal((await readJournal(gap, { fromSeq: 15 })).entries.length, 6, 'a gap below fromSeq is not read');
  const inner = journal(t, { 'statements.jsonl': header() + entries(1, 5) + entries(7, 9) });
  t.equal(((await readJournal(inner, { fromSeq: 3 }).catch((e: unknown) => e)) as JournalError).kind, 'gap');
  const twice = journal(t, { 'statements.jsonl': header() + entries(1, 5) + execLine(5) + entries(6, 7) });
  t.equal(((await readJournal(twice, { fromSeq: 2 }).catch((e: unknown) => e)) as JournalError).kind, 'duplicate');
});
