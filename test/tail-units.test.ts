/** The follower's pure parts: its command line, filters, cursor file, text format and retry policy. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../journal/record';
import { OptionsError } from '../src/config/options-values';
import { CursorError, readCursor, writeCursor } from '../tail/cursor';
import { matches, NO_FILTER } from '../tail/filter';
import { entryJson, entryText } from '../tail/format';
import { backoffDelay, GaveUpError, withRetries } from '../tail/retry';
import { parseTailOptions, TAIL_USAGE } from '../tail/tail-options';

import { optionsMessage } from './helpers/assertions';

const CWD = '/srv/app';

const message = optionsMessage;

function entry(fields: Partial<JournalEntry>): JournalEntry {
  return {
    seq: 1,
    ts: '2026-11-21T10:00:00.000Z',
    db: 'school.db',
    session: null,
    kind: 'exec',
    sql: 'SELECT 1',
    ok: true,
    ms: 1,
    ...fields,
  };
}

const failed = entry({ seq: 7, ok: false, code: 3002, class: 3, error: '[SQ3002] UNIQUE constraint failed: t.x' });

t.test('options: defaults, lists, start points and paths resolved against cwd', async (t) => {
  const options = parseTailOptions(['-log-file', 'j/s.jsonl'], CWD);
  t.not(options, 'help');
  if (options === 'help') return;
  t.equal(options.logFile, path.join(CWD, 'j/s.jsonl'));
  t.equal(options.start, 'end');
  t.equal(options.cursor, null);
  t.strictSame(options.filter, NO_FILTER);
  t.equal(options.format, 'json');
  t.equal(options.retries, null, 'retries forever by default');
  t.equal(options.backoffMs, 200);
  t.equal(options.maxBackoffMs, 30_000);
  t.equal(options.pollMs, 200);
  t.equal(options.once, false);
  const full = parseTailOptions(
    [
      '-log-file=s.jsonl',
      '-cursor',
      'c.json',
      '-from-seq',
      '5',
      '-class',
      '3,9',
      '-code=3002',
      '-db',
      'school',
      '-failed',
      '-kind',
      'exec,void',
      '-token-name',
      'alumno-05,Ana',
      '-once',
      '-poll',
      '50ms',
      '-webhook',
      'http://127.0.0.1:9/hook',
      '-retries',
      '0',
    ],
    CWD,
  );
  if (full === 'help') return t.fail('help');
  t.strictSame(full.start, { seq: 5 });
  t.equal(full.cursor, path.join(CWD, 'c.json'));
  t.strictSame(full.filter, {
    classes: [3, 9],
    codes: [3002],
    dbs: ['school'],
    failed: true,
    kinds: ['exec', 'void'],
    tokenNames: ['alumno-05', 'Ana'],
  });
  t.equal(full.retries, 0);
  t.equal(full.pollMs, 50);
  const byTime = parseTailOptions(['-log-file', 's', '-from-time', '2026-11-21T10:00:00Z'], CWD);
  t.strictSame(byTime !== 'help' && byTime.start, { time: Date.parse('2026-11-21T10:00:00Z') });
  t.equal(parseTailOptions(['-h'], CWD), 'help');
  t.match(TAIL_USAGE, /-cursor <file>/);
});

t.test('options: each mistake is one line naming the flag', async (t) => {
  t.equal(
    message(() => parseTailOptions([], CWD)),
    '-log-file is required',
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-kind', 'exec,select'], CWD)),
    /^-kind: expected one of exec, begin/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-class', 'three'], CWD)),
    /^-class: expected a non-negative integer/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-from-seq', '0'], CWD)),
    /^-from-seq: expected a positive integer/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-from-time', 'yesterday'], CWD)),
    /^-from-time: expected an ISO time/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-out', 'o', '-cursor', 'c'], CWD)),
    /^-out keeps its own place/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-out', 'o', '-exec', 'cat'], CWD)),
    /^-out cannot be used with -exec or -webhook/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-out', 'o', '-format', 'text'], CWD)),
    /^-format text applies to stdout only: -out always writes the entry JSON/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-from-seq', '1', '-from-time', '2026-01-01T00:00:00Z'], CWD)),
    /cannot be used together/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-exec', 'cat', '-webhook', 'http://x/'], CWD)),
    /-exec and -webhook cannot be used together/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-webhook', 'ftp://x/'], CWD)),
    /^-webhook: expected an http/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-format', 'yaml'], CWD)),
    /^-format: expected json or text/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-exec', 'cat', '-format', 'text'], CWD)),
    /^-format text applies to stdout only: -exec and -webhook always get the entry JSON/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-webhook', 'http://x/', '-format=text'], CWD)),
    /^-format text applies to stdout only/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-token-name', 'sqs_secret!'], CWD)),
    /^-token-name: expected a token name/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-poll', '0'], CWD)),
    /^-poll: expected a duration above zero/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-backoff', '2s', '-max-backoff', '1s'], CWD)),
    /-max-backoff must be at least -backoff/,
  );
  t.match(
    message(() => parseTailOptions(['-log-file', 's', '-token', 'x'], CWD)),
    /unknown flag -token/,
  );
});

t.test('options: -format json beside -exec, -webhook and -out is what they get anyway', async (t) => {
  for (const target of [
    ['-exec', 'cat'],
    ['-webhook', 'http://127.0.0.1:9/hook'],
    ['-out', 'o.jsonl'],
  ]) {
    const options = parseTailOptions(['-log-file', 's', ...target, '-format', 'json'], CWD);
    if (options === 'help') return t.fail('help');
    t.equal(options.format, 'json', `${target[0]} with -format json`);
  }
});

t.test('filters: every criterion must hold; a list matches any item', async (t) => {
  t.ok(matches(NO_FILTER, entry({})), 'no filter passes everything');
  t.ok(matches(NO_FILTER, entry({ kind: 'void', voids: [3] })), 'void entries too');
  t.ok(matches({ ...NO_FILTER, classes: [3] }, failed));
  t.notOk(matches({ ...NO_FILTER, classes: [9] }, failed));
  t.notOk(matches({ ...NO_FILTER, classes: [3] }, entry({})), 'an entry without class never passes -class');
  t.ok(matches({ ...NO_FILTER, codes: [1001, 3002] }, failed));
  t.notOk(matches({ ...NO_FILTER, codes: [3003] }, failed));
  t.ok(matches({ ...NO_FILTER, failed: true }, failed));
  t.notOk(matches({ ...NO_FILTER, failed: true }, entry({})));
  t.ok(matches({ ...NO_FILTER, dbs: ['school'] }, failed), 'a name without .db');
  t.ok(matches({ ...NO_FILTER, dbs: ['school.db'] }, failed));
  t.notOk(matches({ ...NO_FILTER, dbs: ['shop'] }, failed));
  t.notOk(matches({ ...NO_FILTER, dbs: ['school'] }, entry({ db: null })));
  t.ok(matches({ ...NO_FILTER, kinds: ['exec'] }, failed));
  t.notOk(matches({ ...NO_FILTER, kinds: ['begin'] }, failed));
  t.notOk(matches({ ...NO_FILTER, classes: [3], dbs: ['shop'] }, failed), 'criteria combine with and');
  const byAna = entry({ tokenId: 't1', tokenName: 'ana' });
  t.ok(matches({ ...NO_FILTER, tokenNames: ['ben', 'ana'] }, byAna), "-token-name matches the entry's tokenName");
  t.ok(matches({ ...NO_FILTER, tokenNames: ['ANA'] }, byAna), 'regardless of case, as the server keeps names');
  t.notOk(matches({ ...NO_FILTER, tokenNames: ['ben'] }, byAna));
  t.notOk(
    matches({ ...NO_FILTER, tokenNames: ['ana'] }, entry({})),
    'an entry without a token never passes -token-name',
  );
});

t.test('cursor: written atomically, read back, absent and damaged files', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tail-cursor-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cursor.json');
  t.equal(readCursor(file), undefined, 'no file yet');
  writeCursor(file, 0);
  t.equal(readCursor(file), 0);
  writeCursor(file, 42);
  t.equal(readCursor(file), 42);
  t.strictSame(fs.readdirSync(dir), ['cursor.json'], 'no temporary file is left');
  fs.writeFileSync(file, '{"seq": -1}');
  t.throws(() => readCursor(file), CursorError);
  fs.writeFileSync(file, '4');
  t.throws(() => readCursor(file), CursorError);
});

t.test('format: JSON without crc, and a readable line', async (t) => {
  t.equal(entryJson(failed), JSON.stringify(failed));
  t.equal(entryText(failed), '2026-11-21T10:00:00.000Z #7 school.db - 3002 [SQ3002] UNIQUE constraint failed: t.x');
  t.equal(
    entryText({ ...failed, tokenId: 't1', tokenName: 'alumno-05' }),
    '2026-11-21T10:00:00.000Z #7 school.db alumno-05 3002 [SQ3002] UNIQUE constraint failed: t.x',
    "the token's name",
  );
  t.equal(entryText(entry({ seq: 2, db: null, kind: 'createdb' })), '2026-11-21T10:00:00.000Z #2 - - createdb ok');
});

t.test('retries: back-off doubles up to its cap, and a bounded policy gives up', async (t) => {
  const policy = { retries: null, backoffMs: 100, maxBackoffMs: 1000 };
  t.strictSame(
    [1, 2, 3, 4, 5, 60].map((n) => backoffDelay(policy, n)),
    [100, 200, 400, 800, 1000, 1000],
  );
  const waits: number[] = [];
  let tries = 0;
  const flaky = withRetries(
    async () => {
      if (++tries <= 3) throw new Error('receiver down');
    },
    policy,
    () => undefined,
    async (ms) => {
      waits.push(ms);
    },
  );
  await flaky(failed);
  t.equal(tries, 4, 'delivered on the fourth try');
  t.strictSame(waits, [100, 200, 400]);
  const never = withRetries(
    async () => {
      throw new Error('receiver down');
    },
    { ...policy, retries: 2 },
    () => undefined,
    async () => undefined,
  );
  await t.rejects(never(failed), GaveUpError);
});
