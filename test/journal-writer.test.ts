/**
 * The journal writer under faults, with an injected file system (not a real
 * full disk: these tests run unprivileged). Each fault must leave only whole
 * lines in the journal, refuse the entries it hit with JournalUnavailableError,
 * and let the next append succeed with the next seq once the fault is gone.
 * The crash states at open are built by hand, as a kill at that instant leaves them.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { checkpointFile } from '../journal/checkpoint';
import { journalFiles, rotatedName } from '../journal/naming';
import { readJournal } from '../journal/reader';
import { decodeLine, encodeLine, isHeader, JOURNAL_FORMAT, type JournalHeader } from '../journal/record';
import { nextName } from '../journal/rotation';
import { JournalUnavailableError } from '../journal/unavailable';
import { JournalWriter, type JournalWriterOptions, type NewEntry } from '../journal/writer';
import { FakeFileSystem } from './helpers/fake-file-system';

const HEADER = {
  service: 'sqlscribe',
  version: '0.1.0',
  level: 'mod',
  betterSqlite3: '12.11.1',
  sqlite: '3.50.4',
  node: 'v20',
  tz: 'UTC',
} as const;

function entry(n: number): NewEntry {
  const sql = `INSERT INTO t VALUES (${n})`;
  return {
    db: 'a.db',
    session: null,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    ok: true,
    ms: 0,
    clock: 1,
    seed: '0123456789abcdef',
  };
}

interface Setup {
  file: string;
  fake: FakeFileSystem;
  warnings: string[];
  open(options?: Partial<JournalWriterOptions>): Promise<JournalWriter>;
}

function setup(t: Test, files: Parameters<Test['testdir']>[0] = {}): Setup {
  const file = path.join(t.testdir(files), 'statements.jsonl');
  const fake = new FakeFileSystem();
  const warnings: string[] = [];
  const open = (options: Partial<JournalWriterOptions> = {}) =>
    JournalWriter.open({
      file,
      maxSize: 1 << 20,
      fsync: true,
      compress: false,
      header: HEADER,
      warn: (m) => warnings.push(m),
      fileSystem: fake,
      ...options,
    });
  return { file, fake, warnings, open };
}

async function appendAll(writer: JournalWriter, from: number, count: number): Promise<number[]> {
  const appended = Array.from({ length: count }, (_, i) => writer.append(entry(from + i)));
  await Promise.all(appended.map((a) => a.written));
  return appended.map((a) => a.seq);
}

/** Every line of every journal file decodes, and every file ends with a newline. */
function assertWholeLines(t: Test, dir: string): void {
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) {
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    t.ok(text === '' || text.endsWith('\n'), `${name} ends with a whole line`);
    for (const line of text.split('\n').filter((l) => l.length > 0)) decodeLine(line);
  }
}

async function assertRefused(t: Test, written: Promise<void>, code: string): Promise<void> {
  const error = await written.then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(error instanceof JournalUnavailableError, `refused with JournalUnavailableError (${String(error)})`);
  t.equal((error as JournalUnavailableError).code, code);
  t.ok((error as JournalUnavailableError).cause, 'carries its cause');
}

/** The journal reads back whole, gapless, with seq 1..last. */
async function assertSeqs(t: Test, file: string, last: number): Promise<void> {
  const contents = await readJournal(file);
  t.same(
    contents.entries.map((e) => e.seq),
    Array.from({ length: last }, (_, i) => i + 1),
    `seq 1..${last}, gapless`,
  );
  t.same(contents.warnings, [], 'no damage');
}

/** A fault while writing: refused, whole lines only, seq unchanged, and the next append works once healed. */
async function faultRoundTrip(t: Test, inject: (fake: FakeFileSystem) => void, code: string): Promise<void> {
  const { file, fake, open } = setup(t);
  const writer = await open();
  await appendAll(writer, 1, 3);
  const sizeBefore = fs.statSync(file).size;
  inject(fake);
  const hit = [writer.append(entry(4)), writer.append(entry(5)), writer.append(entry(6))];
  for (const a of hit) await assertRefused(t, a.written, code);
  t.equal(fs.statSync(file).size, sizeBefore, 'the file is cut back to its size before the chunk');
  assertWholeLines(t, path.dirname(file));
  t.equal(writer.lastSeq, 3, 'lastSeq is the last durable seq');
  fake.heal();
  const next = writer.append(entry(7));
  t.equal(next.seq, 4, 'the next append takes the next gapless seq');
  await next.written;
  await writer.close();
  await assertSeqs(t, file, 4);
}

t.test('a full disk (a short write, then ENOSPC) refuses the chunk and writes resume when space is back', (t) =>
  faultRoundTrip(t, (fake) => (fake.spaceLeft = 40), 'ENOSPC'),
);

t.test('ENOSPC on the first byte refuses the chunk and writes resume', (t) =>
  faultRoundTrip(t, (fake) => fake.fail('write', 'ENOSPC'), 'ENOSPC'),
);

t.test('EIO on a write refuses the chunk and writes resume', (t) =>
  faultRoundTrip(t, (fake) => fake.fail('write', 'EIO'), 'EIO'),
);

t.test('a failed fdatasync refuses the chunk and cuts its written bytes off', (t) =>
  faultRoundTrip(t, (fake) => fake.fail('datasync', 'EIO'), 'EIO'),
);

t.test('a short write followed by EIO leaves no partial line', (t) =>
  // The first write call goes through short (the disk has 25 bytes); the call for the rest fails with EIO.
  faultRoundTrip(
    t,
    (fake) => {
      fake.spaceLeft = 25;
      fake.fail('write', 'EIO', { times: 1, after: 1 });
    },
    'EIO',
  ),
);

t.test('a truncate that fails too is redone before the next write', async (t) => {
  const { file, fake, open } = setup(t);
  const writer = await open();
  await appendAll(writer, 1, 2);
  const sizeBefore = fs.statSync(file).size;
  fake.fail('datasync', 'EIO', { times: 1 }).fail('truncate', 'EIO', { times: 1 });
  await assertRefused(t, writer.append(entry(3)).written, 'EIO');
  t.ok(fs.statSync(file).size > sizeBefore, 'the unsynced line is still there: the cut failed');
  const next = writer.append(entry(4));
  t.equal(next.seq, 3);
  await next.written;
  await writer.close();
  assertWholeLines(t, path.dirname(file));
  await assertSeqs(t, file, 3);
});

t.test('entries appended while a chunk fails are refused with it, and seq goes back', async (t) => {
  const { file, fake, open } = setup(t);
  const writer = await open();
  await appendAll(writer, 1, 1);
  fake.fail('datasync', 'EIO', { times: 1 });
  const first = writer.append(entry(2));
  await Promise.resolve();
  const behind = writer.append(entry(3));
  t.equal(behind.seq, 3, 'assigned while the first is in flight');
  t.equal(writer.lastAssignedSeq, 3);
  await assertRefused(t, first.written, 'EIO');
  await assertRefused(t, behind.written, 'EIO');
  t.equal(writer.lastAssignedSeq, 1, 'the counter is back at the last durable seq');
  await appendAll(writer, 4, 2);
  await writer.close();
  await assertSeqs(t, file, 3);
});

t.test('entries appended together are written together or not at all', async (t) => {
  const { file, fake, open } = setup(t);
  const writer = await open();
  await appendAll(writer, 1, 1);
  const before = fs.statSync(file).size;
  await appendAll(writer, 2, 1);
  const line = fs.statSync(file).size - before;
  const sizeBefore = fs.statSync(file).size;
  // Room for the first of the three, not for all of them: a writer that started a chunk with the first alone would keep it.
  fake.spaceLeft = line + 5;
  const together = writer.appendAll([entry(3), entry(4), entry(5)]);
  t.same(together.seqs, [3, 4, 5]);
  await assertRefused(t, together.written, 'ENOSPC');
  t.equal(fs.statSync(file).size, sizeBefore, 'none of them is left in the file');
  fake.heal();
  const again = writer.appendAll([entry(3), entry(4)]);
  t.same(again.seqs, [3, 4], 'the refused seqs are handed out again');
  await again.written;
  await writer.close();
  await assertSeqs(t, file, 4);
});

t.test('group commit: concurrent appends share fdatasync calls', async (t) => {
  const { file, fake, open } = setup(t);
  const writer = await open();
  const before = fake.count('datasync');
  const count = 100;
  await appendAll(writer, 1, count);
  const syncs = fake.count('datasync') - before;
  t.ok(syncs < count, `${count} appends, ${syncs} fdatasync calls`);
  t.ok(syncs >= 1, 'synced at least once');
  await writer.close();
  await assertSeqs(t, file, count);
});

t.test('without fsync nothing is synced per chunk', async (t) => {
  const { fake, open } = setup(t);
  const writer = await open({ fsync: false });
  const before = fake.count('datasync');
  await appendAll(writer, 1, 5);
  t.equal(fake.count('datasync'), before);
  await writer.close();
});

/** Every file starts with a header whose firstSeq is its first entry's seq. */
async function assertHeaders(t: Test, file: string): Promise<number> {
  const contents = await readJournal(file);
  const files = await journalFiles(file);
  for (const name of files) {
    const text = name.endsWith('.gz')
      ? zlib.gunzipSync(fs.readFileSync(name)).toString('utf8')
      : fs.readFileSync(name, 'utf8');
    const lines = text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => decodeLine(l));
    const [head, first] = lines;
    t.ok(head !== undefined && isHeader(head), `${path.basename(name)} begins with a header`);
    if (head === undefined || !isHeader(head)) continue;
    if (first !== undefined && !isHeader(first))
      t.equal(head.firstSeq, first.seq, `${path.basename(name)}: firstSeq is its first entry's seq`);
    else
      t.equal(
        head.firstSeq,
        contents.entries.length + 1,
        `${path.basename(name)} holds no entry yet: firstSeq is the next seq`,
      );
  }
  return files.length;
}

t.test('rotates by size: each file begins with a header naming its first seq, gapless across files', async (t) => {
  const { file, open } = setup(t);
  const writer = await open({ maxSize: 700 });
  for (let i = 0; i < 10; i++) await appendAll(writer, i * 4 + 1, 4);
  await writer.close();
  const files = await assertHeaders(t, file);
  t.ok(files >= 5, `rotated into ${files} files`);
  await assertSeqs(t, file, 40);
  t.same(
    fs.readdirSync(path.dirname(file)).filter((n) => n.endsWith('.next')),
    [],
    'no .next left',
  );
});

t.test('rotation with compression gzips every rotated file and removes the plain ones', async (t) => {
  const { file, open } = setup(t);
  const writer = await open({ maxSize: 700, compress: true });
  for (let i = 0; i < 8; i++) await appendAll(writer, i * 3 + 1, 3);
  await writer.close();
  const names = fs.readdirSync(path.dirname(file));
  const rotated = names.filter((n) => n !== 'statements.jsonl');
  t.ok(rotated.length >= 3, `${rotated.length} rotated files`);
  t.ok(
    rotated.every((n) => n.endsWith('.jsonl.gz')),
    `all gzipped: ${rotated.join(', ')}`,
  );
  await assertHeaders(t, file);
  await assertSeqs(t, file, 24);
});

t.test(
  'a failed rename during rotation refuses the next write; the written entries stay, and the rotation is retried',
  async (t) => {
    const { file, fake, warnings, open } = setup(t);
    const writer = await open({ maxSize: 600 });
    fake.fail('rename', 'EIO');
    let seq = 0;
    while (fs.statSync(file).size < 600) await appendAll(writer, ++seq, 1);
    const durable = writer.lastSeq;
    t.equal(durable, seq, 'the chunk that filled the file was written');
    await assertRefused(t, writer.append(entry(seq + 1)).written, 'EIO');
    t.match(warnings.join('\n'), /rotation failed/, 'the idle rotation said it failed');
    fake.heal();
    const next = writer.append(entry(seq + 1));
    t.equal(next.seq, durable + 1);
    await next.written;
    await writer.close();
    t.equal(await assertHeaders(t, file), 2, 'rotated once');
    await assertSeqs(t, file, durable + 1);
    assertWholeLines(t, path.dirname(file));
  },
);

t.test('a rotation that fails at any step is resumed where it stopped', async (t) => {
  const { file, fake, open } = setup(t);
  const writer = await open({ maxSize: 500, fsync: false });
  let seq = 0;
  const steps = [
    ['open', /\.next$/],
    ['datasync', /\.next$/],
    ['rename', /^statements\.jsonl$/],
    ['rename', /\.next$/],
    ['syncDirectory', /./],
  ] as const;
  for (const [op, name] of steps) {
    // Twice: once for the rotation that runs as soon as the file is full, once for the append after it.
    fake.fail(op, 'EIO', { times: 2, name });
    let refused: unknown;
    for (let tries = 0; tries < 50 && refused === undefined; tries++) {
      const a = writer.append(entry(seq + 1));
      refused = await a.written.then(
        () => {
          seq = a.seq;
          return undefined;
        },
        (err: unknown) => err,
      );
    }
    t.ok(refused instanceof JournalUnavailableError, `${op} ${name}: the append after the failed rotation is refused`);
    fake.heal();
    await appendAll(writer, ++seq, 1);
  }
  await writer.close();
  t.equal(await assertHeaders(t, file), steps.length + 1, 'one rotation per step, none twice');
  await assertSeqs(t, file, seq);
  t.same(
    fs.readdirSync(path.dirname(file)).filter((n) => n.endsWith('.next')),
    [],
    'no .next left',
  );
});

t.test('open finishes a rotation a crash interrupted between the renames', async (t) => {
  const { file, warnings, open } = setup(t);
  let writer = await open({ maxSize: 1 << 20 });
  await appendAll(writer, 1, 5);
  await writer.close();
  // The state a kill leaves after the active file was renamed away and before .next took its place.
  fs.renameSync(file, rotatedName(file, new Date(), 1));
  fs.writeFileSync(
    nextName(file),
    encodeLine({ kind: 'header', format: JOURNAL_FORMAT, started: new Date().toISOString(), ...HEADER, firstSeq: 6 }),
  );
  writer = await open();
  t.match(warnings.join('\n'), /finished a rotation/);
  t.equal(writer.lastSeq, 5, "the last seq comes from the new file's header");
  t.equal(writer.append(entry(6)).seq, 6);
  await writer.close();
  t.notOk(fs.existsSync(nextName(file)));
  await assertHeaders(t, file);
  await assertSeqs(t, file, 6);
});

t.test('open removes a stale .next beside the active file', async (t) => {
  const { file, warnings, open } = setup(t);
  let writer = await open();
  await appendAll(writer, 1, 3);
  await writer.close();
  fs.writeFileSync(nextName(file), '{"kind":"hea');
  writer = await open();
  t.match(warnings.join('\n'), /removed statements\.jsonl\.next/);
  t.notOk(fs.existsSync(nextName(file)));
  t.equal(writer.append(entry(4)).seq, 4);
  await writer.close();
  await assertSeqs(t, file, 4);
});

t.test('open cuts a torn tail, reports it, and continues after the last whole entry', async (t) => {
  const { file, warnings, open } = setup(t);
  let writer = await open();
  await appendAll(writer, 1, 3);
  await writer.close();
  fs.appendFileSync(file, encodeLine({ ...entry(4), seq: 4, ts: new Date().toISOString() }).slice(0, 30));
  writer = await open();
  t.match(warnings.join('\n'), /torn last line/);
  t.equal(writer.lastSeq, 3);
  await appendAll(writer, 4, 1);
  await writer.close();
  assertWholeLines(t, path.dirname(file));
  await assertSeqs(t, file, 4);
});

t.test('open after a kill right after a rotation: a header-only active file gives the last seq', async (t) => {
  const { file, open } = setup(t);
  let writer = await open({ maxSize: 400 });
  let seq = 0;
  while ((await journalFiles(file)).length < 2) await appendAll(writer, ++seq, 1);
  await writer.close();
  t.equal(fs.readFileSync(file, 'utf8').split('\n').length, 2, 'the active file holds only its header');
  writer = await open({ maxSize: 400 });
  t.equal(writer.lastSeq, seq);
  await appendAll(writer, seq + 1, 1);
  await writer.close();
  await assertSeqs(t, file, seq + 1);
});

t.test('open never trusts the checkpoint, and never reads rotated files when the active file answers', async (t) => {
  const { file, open } = setup(t);
  let writer = await open({ maxSize: 400 });
  let seq = 0;
  while ((await journalFiles(file)).length < 3) await appendAll(writer, ++seq, 1);
  await appendAll(writer, ++seq, 1);
  await writer.close();
  fs.writeFileSync(checkpointFile(file), JSON.stringify({ lastSeq: 999, appliedThrough: 2 }));
  // Rotated files that cannot be read: an open that scanned them would fail.
  const rotated = (await journalFiles(file)).filter((f) => f !== file);
  const saved = rotated.map((f) => [f, fs.readFileSync(f)] as const);
  for (const f of rotated) fs.writeFileSync(`${f}.gz`, 'not gzip');
  writer = await open({ maxSize: 400 });
  t.equal(writer.lastSeq, seq, 'from the active file, not the checkpoint');
  await writer.close();
  for (const [f] of saved) fs.unlinkSync(`${f}.gz`);
  t.equal(JSON.parse(fs.readFileSync(checkpointFile(file), 'utf8')).appliedThrough, 2, 'appliedThrough left alone');
});

t.test('open without an active file finds the last seq in the rotated files', async (t) => {
  const { file, open } = setup(t);
  let writer = await open({ maxSize: 400 });
  let seq = 0;
  while ((await journalFiles(file)).length < 2) await appendAll(writer, ++seq, 1);
  await writer.close();
  fs.unlinkSync(file);
  writer = await open({ maxSize: 400 });
  t.equal(writer.lastSeq, seq);
  await appendAll(writer, seq + 1, 1);
  await writer.close();
  await assertSeqs(t, file, seq + 1);
});

t.test(
  'open cleans up an interrupted compression: a stray .gz.tmp, and a plain file beside its complete .gz',
  async (t) => {
    const { file, warnings, open } = setup(t);
    let writer = await open({ maxSize: 400, compress: true });
    let seq = 0;
    while ((await journalFiles(file)).length < 3) await appendAll(writer, ++seq, 1);
    await writer.close();
    const [gz] = (await journalFiles(file)).filter((f) => f.endsWith('.gz'));
    if (gz === undefined) throw new Error('no gzipped file');
    const plain = gz.slice(0, -'.gz'.length);
    fs.writeFileSync(plain, zlib.gunzipSync(fs.readFileSync(gz)));
    fs.writeFileSync(`${plain}.gz.tmp`, 'half');
    t.same(
      (await journalFiles(file)).filter((f) => f.endsWith('.tmp') || f.endsWith('.next')),
      [],
      'journalFiles never lists .gz.tmp',
    );
    writer = await open({ maxSize: 400, compress: true });
    t.match(warnings.join('\n'), /already compressed/);
    t.match(warnings.join('\n'), /unfinished compression/);
    t.notOk(fs.existsSync(plain), 'the plain file is gone');
    t.notOk(fs.existsSync(`${plain}.gz.tmp`), 'the .gz.tmp is gone');
    t.ok(fs.existsSync(gz), 'the .gz stays');
    await appendAll(writer, seq + 1, 1);
    await writer.close();
    await assertSeqs(t, file, seq + 1);
  },
);

t.test('journalFiles never lists a .next file', async (t) => {
  const { file } = setup(t, {
    'statements.jsonl': '',
    'statements.jsonl.next': '',
    'statements.20261121-054312.1.jsonl.gz.tmp': '',
  });
  t.same(
    (await journalFiles(file)).map((f) => path.basename(f)),
    ['statements.jsonl'],
  );
});

t.test(
  'a journal that cannot be created at open for lack of space: the server starts, and writes work once space is back',
  async (t) => {
    const { file, fake, warnings, open } = setup(t);
    fake.spaceLeft = 0;
    const writer = await open();
    t.match(warnings.join('\n'), /cannot be opened yet/);
    await assertRefused(t, writer.append(entry(1)).written, 'ENOSPC');
    fake.heal();
    t.equal(writer.append(entry(1)).seq, 1);
    await writer.close();
    await assertHeaders(t, file);
    await assertSeqs(t, file, 1);
  },
);

t.test('an append after close is refused', async (t) => {
  const { open } = setup(t);
  const writer = await open();
  await writer.close();
  await assertRefused(t, writer.append(entry(1)).written, 'ECLOSED');
});

t.test('the header of the first file says firstSeq 1', async (t) => {
  const { file, open } = setup(t);
  const writer = await open();
  await writer.close();
  const head = decodeLine(fs.readFileSync(file, 'utf8').split('\n')[0] as string) as JournalHeader;
  t.equal(head.firstSeq, 1);
});

t.test('a journal written by another engine is continued in a new file whose header names this one', async (t) => {
  const { file, open } = setup(t);
  const old = await open();
  await appendAll(old, 1, 3);
  await old.close();
  t.equal(old.engineChangedAtOpen, null, 'a new journal has no engine change');

  const upgraded = await open({ header: { ...HEADER, betterSqlite3: '13.2.0', sqlite: '3.54.1' } });
  t.same(upgraded.engineChangedAtOpen?.lastSeqBefore, 3, 'the change is told, with the last seq of the old engine');
  t.equal(upgraded.engineChangedAtOpen?.previous.sqlite, '3.50.4');
  await appendAll(upgraded, 4, 2);
  await upgraded.close();
  const { headers, entries } = await readJournal(file);
  t.same(
    headers.map(({ header }) => [header.sqlite, header.firstSeq]),
    [
      ['3.50.4', 1],
      ['3.54.1', 4],
    ],
    'one file for each engine',
  );
  t.same(
    entries.map((e) => e.seq),
    [1, 2, 3, 4, 5],
  );

  const again = await open({
    header: { ...HEADER, betterSqlite3: '13.2.0', sqlite: '3.54.1', version: '0.2.0', node: 'v24' },
  });
  t.equal(again.engineChangedAtOpen, null, 'the same engine (another Node or sqlscribe version) continues the file');
  await again.close();
  t.equal((await readJournal(file)).headers.length, 2);

  const otherZone = await open({
    header: { ...HEADER, betterSqlite3: '13.2.0', sqlite: '3.54.1', tz: 'Europe/Madrid' },
  });
  t.ok(otherZone.engineChangedAtOpen, 'another time zone is another engine too');
  await otherZone.close();
});
