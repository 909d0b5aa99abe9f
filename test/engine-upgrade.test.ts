/**
 * Upgrading an installation to the engine of this release. The fixture
 * (test/fixtures/release-0.1.0, made by its make-fixture.mjs with the
 * previous release: better-sqlite3 12.11.1, SQLite 3.53.2, Node 20) is a
 * data directory and journal with a template, two copies, a session and
 * rotated files. One copy's file is put back to its state of the first phase,
 * and the checkpoint removed, as a crash of the old release could leave it:
 * the new engine must recover it from the old entries.
 *
 * The new server then must answer exactly what the old one answered, begin a
 * journal file of its own engine, and take a snapshot round at once, so that
 * replay restores any later point without the old engine and without -force;
 * a point before the upgrade needs -force, and gets a warning.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { readJournal } from '../journal/reader';
import { engineVersions } from '../src/engine/engine-versions';
import { listRounds } from '../src/snapshots/manifest';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type TestServer } from './helpers/server';

const FIXTURE = path.join(__dirname, 'fixtures', 'release-0.1.0');
const answers = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'answers.json'), 'utf8')) as Record<string, unknown>;

/** The fixture's data directory, copied, with alumno-1.db behind its journal and no checkpoint. */
function crashedInstallation(dir: string): string {
  const data = path.join(dir, 'data');
  fs.cpSync(path.join(FIXTURE, 'data'), data, { recursive: true });
  fs.copyFileSync(path.join(FIXTURE, 'alumno-1.phase-1.db'), path.join(data, 'alumno-1.db'));
  fs.rmSync(path.join(data, 'journal', 'statements.jsonl.checkpoint'));
  return data;
}

async function stopped(tt: Test, server: TestServer): Promise<void> {
  tt.equal(await server.stop(), 0, 'the server stops cleanly');
}

t.test('a data directory and journal of the previous release, on the new engine', async (tt) => {
  const dir = scratchDir(tt);
  const data = crashedInstallation(dir);
  const journalFile = path.join(data, 'journal', 'statements.jsonl');
  const before = await readJournal(journalFile);
  const lastOld = before.entries.at(-1)!.seq;
  tt.ok(
    before.headers.every(({ header }) => header.sqlite !== engineVersions().sqlite),
    'the fixture was written by another SQLite',
  );

  const server = await startServer(['-dir', data], { cwd: dir });
  tt.teardown(() => server.stop());
  tt.match(
    server.stderr(),
    /sqlscribe ready \(([1-9]\d*) journal entries applied at start-up\)/,
    'recovery applied the old entries alumno-1.db lacked',
  );
  tt.match(server.stderr(), /taking a snapshot round/, 'the engine change is logged');

  for (const db of ['lesson', 'alumno-1', 'alumno-2']) {
    const reply = await server.exec(db, 'SELECT * FROM pupils ORDER BY id; SELECT * FROM adults ORDER BY name');
    tt.equal(reply.status, 200);
    tt.same(reply.body.results, answers[db], `${db} answers what the previous release answered`);
  }
  const write = await server.exec('alumno-1', "INSERT INTO pupils (name, age, mark) VALUES ('Fede', 11, 5.5)");
  tt.equal(write.status, 200, 'writes go on after the upgrade');
  tt.equal((await server.get('/health')).body.ready, true);
  tt.equal(server.child.exitCode, null, 'the same server process is alive');
  await stopped(tt, server);

  const after = await readJournal(journalFile);
  const here = engineVersions();
  const newFiles = after.headers.filter(
    ({ header }) => header.sqlite === here.sqlite && header.betterSqlite3 === here.betterSqlite3,
  );
  tt.equal(newFiles.length, 1, 'one journal file of the new engine');
  tt.equal(newFiles[0]!.header.firstSeq, lastOld + 1, 'it begins right after the last entry of the old engine');
  tt.equal(after.entries.at(-1)!.seq, lastOld + 1, 'and holds the write made after the upgrade');

  const rounds = listRounds(path.join(data, 'journal', 'snapshots'));
  tt.equal(rounds.length, 1, 'a snapshot round was taken at the first start');
  tt.ok(rounds[0]!.base >= lastOld, 'it holds every entry of the old engine');

  const latest = await runReplay(['-log-file', journalFile, '-out', path.join(dir, 'latest'), '-verify', data], dir);
  tt.equal(latest.code, 0, `the latest state replays without -force: ${latest.stderr}`);
  tt.match(latest.stderr, /started from the snapshot/);
  tt.match(latest.stderr, /verify: the rebuild equals the live databases/);
  tt.notMatch(latest.stderr, /warning/);

  const old = ['-log-file', journalFile, '-until', String(lastOld - 3)];
  const refused = await runReplay([...old, '-out', path.join(dir, 'old')], dir);
  tt.equal(refused.code, 2, 'a point before the upgrade is refused without -force');
  tt.match(
    refused.stderr,
    /written with another engine \(betterSqlite3 12\.11\.1 there, .* here; sqlite 3\.53\.2 there/,
  );
  tt.notOk(
    fs.existsSync(path.join(dir, 'old')) && fs.readdirSync(path.join(dir, 'old')).length > 0,
    'and nothing is written',
  );
  const forced = await runReplay([...old, '-out', path.join(dir, 'forced'), '-force'], dir);
  tt.equal(forced.code, 0, `with -force it replays: ${forced.stderr}`);
  tt.match(forced.stderr, /warning: .*sqlite 3\.53\.2 there/);
  tt.ok(fs.existsSync(path.join(dir, 'forced', 'alumno-1.db')));

  const whole = await runReplay(['-log-file', journalFile, '-out', path.join(dir, 'whole'), '-no-snapshots'], dir);
  tt.equal(whole.code, 2, 'the whole journal, without the round, needs the old engine too');
  const wholeForced = await runReplay(
    ['-log-file', journalFile, '-out', path.join(dir, 'whole-forced'), '-no-snapshots', '-force', '-verify', data],
    dir,
  );
  tt.equal(wholeForced.code, 0, `and with -force it rebuilds what the live files hold: ${wholeForced.stderr}`);
});

t.test('a second start on the same engine begins no file and takes no extra round', async (tt) => {
  const dir = scratchDir(tt);
  const data = crashedInstallation(dir);
  const first = await startServer(['-dir', data], { cwd: dir });
  tt.teardown(() => first.stop());
  await stopped(tt, first);
  const journalFiles = (): string[] =>
    fs.readdirSync(path.join(data, 'journal')).filter((name) => /\.jsonl(\.gz)?$/.test(name));
  const files = journalFiles();
  const second = await startServer(['-dir', data], { cwd: dir });
  tt.teardown(() => second.stop());
  tt.notMatch(second.stderr(), /taking a snapshot round/);
  tt.equal((await second.exec('alumno-2', "INSERT INTO pupils (name) VALUES ('Gala')")).status, 200);
  await stopped(tt, second);
  tt.same(journalFiles(), files, 'no new journal file');
  tt.equal(listRounds(path.join(data, 'journal', 'snapshots')).length, 1, 'still the one round');
});
