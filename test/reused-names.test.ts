/**
 * A class prefix reused next term, over the real server and the real replay
 * tool (build first): term one's alumno-01 solves an exercise, gets stuck on
 * another and makes errors on its database and on a shared one; the teacher
 * drops the databases, revokes the tokens and makes a new class with the same
 * prefix. The new alumno-01 is another student: GET /exercises/mine shows
 * nothing solved, the teacher's grid, gradebook and evidence count this
 * term's students only (last term's rows only with ?students=all, marked
 * former and apart), and GET /class never names last term's errors as the
 * new student's. A restart (progress and the class view read back from the
 * journal) changes none of it. In the browser, the console's editor history
 * of a database is the token's: a lab's browser does not hand last term's SQL
 * to next term's student of the same database name.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { Journal } from '../journal/journal';
import type { JournalEntry } from '../journal/record';
import type { StoredExercise } from '../src/exercises/exercise-definition';
import { ExerciseProgress, STUCK_ATTEMPTS, STUCK_MINUTES } from '../src/exercises/exercise-progress';
import { ClassActivity } from '../src/services/class-activity';
import { FakeClock } from './helpers/fake-clock';
import { findChromium, launch, openConsole, serverIn } from './helpers/browser';
import { runReplay, type Reply, type TestServer } from './helpers/server';
import { ServerFleet, type ServerPlace } from './helpers/server-fleet';
import { call, ok } from './helpers/token-calls';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const ADMIN = 'reused-names-admin-secret-0123456789';
const fleet = new ServerFleet(t);

const EXERCISES = [
  {
    id: 'count-owners',
    set: 'term',
    title: 'How many owners?',
    prompt: 'Count the owners.',
    template: 'lesson',
    solution: 'SELECT count(*) FROM owners',
  },
  {
    id: 'owner-names',
    set: 'term',
    title: 'Their names',
    prompt: 'The names of the owners.',
    template: 'lesson',
    solution: 'SELECT name FROM owners',
  },
];

interface Token {
  id: string;
  name: string;
  secret: string;
}

interface Cell {
  exercise: string;
  attempts: number;
  solved: boolean;
  stuck: boolean;
  state: string;
}

interface Row {
  token: string;
  tokenId: string | null;
  former?: boolean;
  solved: number;
  attempts: number;
  stuck: number;
  exercises: Cell[];
}

interface ClassError {
  tokenName: string | null;
  tokenId?: string | null;
  former?: boolean;
  statement: string | null;
}

async function makeClass(server: TestServer): Promise<Map<string, Token>> {
  const made = await ok(server, ADMIN, 'POST', '/tokens', {
    prefix: 'alumno',
    count: 2,
    role: 'write',
    from: 'lesson',
  });
  const group = await ok(server, ADMIN, 'POST', '/tokens', { name: 'grupo', role: 'write', databases: ['shared'] });
  const tokens = [...(made.body.tokens as Token[]), ...(group.body.tokens as Token[])];
  return new Map(tokens.map((token) => [token.name, token]));
}

async function answer(server: TestServer, token: Token, id: string, sql: string): Promise<boolean> {
  return (await ok(server, token.secret, 'POST', `/exercises/${id}/check`, { sql })).body.correct as boolean;
}

async function grid(server: TestServer, query = ''): Promise<Row[]> {
  return (await ok(server, ADMIN, 'GET', `/exercises/progress?set=term${query}`)).body.students as Row[];
}

async function classErrors(server: TestServer, db: string): Promise<ClassError[]> {
  const view = await ok(server, ADMIN, 'GET', '/class');
  const databases = view.body.databases as Array<{ db: string; recentErrors: ClassError[] }>;
  return databases.find((entry) => entry.db.replace(/\.db$/, '') === db)?.recentErrors ?? [];
}

/** Term one's work: alumno-01 solves one exercise, is stuck on the other, and fails on its own database and the shared one. */
async function termOneWorks(t: Test, server: TestServer, termOne: Map<string, Token>): Promise<void> {
  const alumno = termOne.get('alumno-01')!;
  t.equal(await answer(server, alumno, 'count-owners', 'SELECT count(id) FROM owners'), true, 'term one solves');
  for (let n = 0; n < 3; n++)
    t.equal(await answer(server, alumno, 'owner-names', 'SELECT id FROM owners'), false, 'term one is wrong');
  const mistake = await call(server, alumno.secret, 'POST', '/exec', {
    db: 'alumno-01',
    sql: "INSERT INTO owners VALUES (1, 'term one mistake')",
  });
  t.equal(mistake.body?.code, 3003, "an error on term one's own database");
  const shared = await call(server, termOne.get('grupo')!.secret, 'POST', '/exec', {
    db: 'shared',
    sql: "INSERT INTO owners VALUES (1, 'term one group mistake')",
  });
  t.equal(shared.body?.code, 3003, 'an error on the shared database');
  const probe = await call(server, alumno.secret, 'POST', '/exec', { db: 'alumno-02', sql: 'SELECT 1' });
  t.equal(probe.status, 403, "a refused look at a classmate's database");
  const mine = (await ok(server, alumno.secret, 'GET', '/exercises/mine?set=term')).body as Row;
  t.match(mine, { token: 'alumno-01', solved: 1, attempts: 4, stuck: 1 }, "term one's own row");
  t.equal((await classErrors(server, 'alumno-01')).length, 1, "the class view shows term one's error");
}

/** The end of term: every database of the class dropped, every token revoked. */
async function endTerm(server: TestServer, termOne: Map<string, Token>): Promise<void> {
  for (const db of ['alumno-01', 'alumno-02'])
    await ok(server, ADMIN, 'POST', '/exec', { sql: `DROP DATABASE "${db}"` });
  for (const token of termOne.values()) await ok(server, ADMIN, 'DELETE', `/tokens/${token.id}`);
}

/** What term two sees before any work of its own. */
async function termTwoSees(
  t: Test,
  server: TestServer,
  termOne: Map<string, Token>,
  termTwo: Map<string, Token>,
  what: string,
): Promise<void> {
  const alumno = termTwo.get('alumno-01')!;
  const mine = (await ok(server, alumno.secret, 'GET', '/exercises/mine?set=term')).body as Row;
  t.match(mine, { token: 'alumno-01', tokenId: alumno.id, solved: 0, attempts: 0, stuck: 0 }, `${what}: mine is empty`);
  t.same(
    mine.exercises.map((cell) => cell.state),
    ['not-tried', 'not-tried'],
    `${what}: nothing of term one is marked for the new alumno-01`,
  );

  const rows = await grid(server);
  t.same(
    rows.map((row) => [row.token, row.tokenId]),
    [
      ['alumno-01', alumno.id],
      ['alumno-02', termTwo.get('alumno-02')!.id],
      ['grupo', termTwo.get('grupo')!.id],
    ],
    `${what}: the grid is this term's students, one row each`,
  );
  t.match(rows[0], { solved: 0, attempts: 0, stuck: 0 }, `${what}: the new alumno-01's row holds none of term one`);

  const all = await grid(server, '&students=all');
  const old = all.find((row) => row.tokenId === termOne.get('alumno-01')!.id);
  t.match(
    old,
    { token: 'alumno-01', former: true, solved: 1, attempts: 4, stuck: 1 },
    `${what}: with students=all, term one's alumno-01 is a row of its own, marked former`,
  );
  t.match(
    all.find((row) => row.tokenId === alumno.id),
    { former: false, solved: 0, attempts: 0 },
    `${what}: and the new one is not`,
  );
  t.ok(
    all.map((row) => row.former).join() === [...all.map((row) => row.former)].sort().join(),
    `${what}: former students come after the current ones`,
  );

  const allCsv = await ok(server, ADMIN, 'GET', '/exercises/progress?set=term&format=csv&students=all&token=alumno-01');
  t.same(
    allCsv.text.trim().split('\r\n'),
    ['token,solved,attempts,count-owners,owner-names', 'alumno-01,0,0,,', 'alumno-01 (former),1,4,1,0'],
    `${what}: a gradebook with students=all names the former student as such`,
  );
  const csv = await ok(server, ADMIN, 'GET', '/exercises/progress?set=term&format=csv');
  t.same(
    csv.text.trim().split('\r\n'),
    ['token,solved,attempts,count-owners,owner-names', 'alumno-01,0,0,,', 'alumno-02,0,0,,', 'grupo,0,0,,'],
    `${what}: the gradebook is this term's`,
  );
  const evidence = await ok(server, ADMIN, 'GET', '/exercises/evidence?set=term');
  t.match(
    evidence.body,
    { students: 3, aggregate_evidence: { aun_no_observable: 3, en_desarrollo: 0 } },
    `${what}: the evidence counts this term's students`,
  );

  t.same(await classErrors(server, 'alumno-01'), [], `${what}: the new alumno-01's database has no errors`);
  const view = await ok(server, ADMIN, 'GET', '/class');
  const refused = view.body.refused as ClassError[];
  for (const refusal of refused.filter((item) => item.tokenName === 'alumno-01'))
    t.match(refusal, { tokenId: termOne.get('alumno-01')!.id, former: true }, `${what}: a former student's refusal`);
  const shared = await classErrors(server, 'shared');
  t.equal(shared.length, 1, `${what}: the shared database keeps its error`);
  t.match(
    shared[0],
    { tokenName: 'grupo', tokenId: termOne.get('grupo')!.id, former: true },
    `${what}: told apart from the new grupo's`,
  );
}

async function replayEquals(t: Test, where: ServerPlace, what: string): Promise<void> {
  const out = path.join(where.dir, `replayed-${Date.now()}`);
  const replay = await runReplay(['-log-file', where.journal, '-out', out, '-verify', where.data], where.dir);
  t.equal(replay.code, 0, `${what}: replay -verify equals the live databases: ${replay.stderr}`);
}

t.test("a reused class prefix never hands the new student last term's progress or errors", async (t) => {
  const dir = scratchDir(t);
  const where: ServerPlace = {
    dir,
    data: path.join(dir, 'data'),
    journal: path.join(dir, 'journal', 'statements.jsonl'),
  };
  let server = await fleet.start(where, ['-token', ADMIN]);
  for (const db of ['lesson', 'shared']) await ok(server, ADMIN, 'POST', '/dbs', { db });
  for (const db of ['lesson', 'shared'])
    await ok(server, ADMIN, 'POST', '/exec', {
      db,
      sql: "CREATE TABLE owners (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO owners VALUES (1, 'Ada'), (2, 'Bo')",
    });
  for (const exercise of EXERCISES) await ok(server, ADMIN, 'POST', '/exercises', exercise);

  const termOne = await makeClass(server);
  await termOneWorks(t, server, termOne);
  await endTerm(server, termOne);
  const termTwo = await makeClass(server);
  t.equal(termTwo.get('alumno-01')!.name, termOne.get('alumno-01')!.name, 'the same name');
  t.not(termTwo.get('alumno-01')!.id, termOne.get('alumno-01')!.id, 'another token');

  await termTwoSees(t, server, termOne, termTwo, 'live');
  const view = await ok(server, ADMIN, 'GET', '/class');
  t.match(
    view.body.refused,
    [{ tokenName: 'alumno-01', tokenId: termOne.get('alumno-01')!.id, former: true, db: 'alumno-02.db' }],
    "live: term one's refusal is in the class view, marked former",
  );
  const bad = await call(server, ADMIN, 'GET', '/exercises/progress?students=some');
  t.match(bad, { status: 400, body: { code: 1008 } }, 'students= is current or all');

  // Term two's own work counts for term two's student, and only that.
  const alumno = termTwo.get('alumno-01')!;
  t.equal(await answer(server, alumno, 'owner-names', 'SELECT name FROM owners ORDER BY id'), true);
  const mine = (await ok(server, alumno.secret, 'GET', '/exercises/mine?set=term')).body as Row;
  t.same(
    mine.exercises.map((cell) => [cell.exercise, cell.state, cell.attempts]),
    [
      ['count-owners', 'not-tried', 0],
      ['owner-names', 'solved', 1],
    ],
    'the new alumno-01 sees their own answer only',
  );

  await fleet.stop(server);
  server = await fleet.start(where, ['-token', ADMIN]);
  const afterRestart = (await ok(server, alumno.secret, 'GET', '/exercises/mine?set=term')).body as Row;
  t.match(afterRestart, { solved: 1, attempts: 1, stuck: 0 }, 'after a restart: the new student has their own work');
  const rows = await grid(server);
  t.match(rows[0], { token: 'alumno-01', tokenId: alumno.id, solved: 1, attempts: 1 }, 'after a restart: the grid');
  t.equal(rows.length, 3, 'after a restart: this term only');
  const shared = await classErrors(server, 'shared');
  t.match(shared, [{ tokenName: 'grupo', former: true }], 'after a restart: the shared error is still told apart');
  t.same(await classErrors(server, 'alumno-01'), [], "after a restart: no error of term one's alumno-01");

  await fleet.stop(server);
  await replayEquals(t, where, 'after both terms');
});

const stored = (id: string): StoredExercise => ({
  id,
  set: 'term',
  position: 1,
  title: id,
  prompt: '',
  template: 'lesson.db',
  solution: 'SELECT 1',
  order: 'any',
  columns: 'position',
  tolerance: 0,
  check: null,
  showRows: false,
  updated: '2026-11-25T08:00:00Z',
  revision: 1,
});

t.test('progress keys a student by token id; an attempt without one by its name alone', async (t) => {
  const clock = new FakeClock();
  const progress = new ExerciseProgress(Journal.disabled(), null, clock);
  const ts = new Date(clock.now()).toISOString();
  progress.noteUnjournaled({ ts, tokenId: 'tok_old', tokenName: 'alumno-01', exercise: 'a', correct: true });
  for (let n = 0; n < STUCK_ATTEMPTS; n++)
    progress.noteUnjournaled({ ts, tokenId: 'tok_old', tokenName: 'alumno-01', exercise: 'b', correct: false });
  progress.noteUnjournaled({ ts, tokenName: 'alumno-01', exercise: 'b', correct: true });
  const rule = { attempts: STUCK_ATTEMPTS, minutes: STUCK_MINUTES };
  const [fresh, old, byName] = await progress.grid(
    [{ id: 'tok_new', name: 'alumno-01' }, { id: 'tok_old', name: 'alumno-01' }, 'alumno-01'],
    [stored('a'), stored('b')],
    rule,
  );
  t.match(fresh, { token: 'alumno-01', tokenId: 'tok_new', solved: 0, attempts: 0, stuck: 0 }, 'the new token: none');
  t.match(old, { tokenId: 'tok_old', solved: 1, attempts: 1 + STUCK_ATTEMPTS, stuck: 1 }, 'the old token: its own');
  t.match(byName, { tokenId: null, solved: 1, attempts: 1 }, 'an attempt without an id: by its name, apart');
  t.same(
    (await progress.attempters()).map((student) => student.id),
    ['tok_old', null],
    'two students bear the name',
  );
});

t.test('the class view: a new creation of a name starts afresh, even when the drop was not seen', async (t) => {
  const listeners: Array<(entries: Array<{ entry: JournalEntry; json: string }>) => void> = [];
  const journal = {
    lastSeq: 0,
    enabled: true,
    onAppended: (listener: (typeof listeners)[number]) => {
      listeners.push(listener);
      return () => undefined;
    },
  } as unknown as Journal;
  const activity = new ClassActivity(journal, null);
  let seq = 0;
  const feed = (fields: Partial<JournalEntry>): void => {
    seq++;
    const entry = {
      seq,
      ts: new Date(Date.UTC(2026, 0, 1, 9, 0, seq)).toISOString(),
      db: 'alumno-01.db',
      session: null,
      kind: 'exec',
      sql: 'SELECT 1',
      ok: true,
      ms: 1,
      ...fields,
    } as JournalEntry;
    for (const listener of listeners) listener([{ entry, json: '' }]);
  };
  feed({ kind: 'createdb', sql: null });
  feed({ ok: false, code: 3003, class: 3, error: 'old', tokenId: 'tok_old', tokenName: 'alumno-01' });
  t.match((await activity.activity()).get('alumno-01.db')?.recentErrors, [
    { tokenId: 'tok_old', tokenName: 'alumno-01' },
  ]);
  feed({ kind: 'copydb', sql: null, from: 'lesson.db' });
  t.same((await activity.activity()).get('alumno-01.db')?.recentErrors, [], 'a copy under the name is another life');
});

const chromiumPath = findChromium();
t.test(
  "in the browser: the editor's history of a database is the token's",
  { skip: chromiumPath === undefined },
  async (t) => {
    const server = await serverIn(t);
    const context = await launch(t, chromiumPath as string);
    const { page, problems } = await openConsole(context, `${server.url}/`);
    // A string, so that the test's CommonJS compilation does not rewrite the browser's import().
    const lists = (await page.evaluate(`import('/console/editor-history.js').then((history) => {
    sessionStorage.setItem('sqlscribe.token', 'sqs_term-one-secret');
    history.addToHistory('alumno-01.db', "SELECT 'term one'");
    const termOne = history.readHistory('alumno-01.db');
    sessionStorage.setItem('sqlscribe.token', 'sqs_term-two-secret');
    const termTwo = history.readHistory('alumno-01.db');
    sessionStorage.removeItem('sqlscribe.token');
    const noToken = history.readHistory('alumno-01.db');
    sessionStorage.setItem('sqlscribe.token', 'sqs_term-one-secret');
    const back = history.readHistory('alumno-01.db');
    const keys = Object.keys(localStorage).filter((key) => key.startsWith('sqlscribe.history.'));
    return { termOne, termTwo, noToken, back, keys };
  })`)) as { termOne: string[]; termTwo: string[]; noToken: string[]; back: string[]; keys: string[] };
    t.same(lists.termOne, ["SELECT 'term one'"], 'term one sees its run');
    t.same(lists.termTwo, [], 'another token of the same database name sees none of it');
    t.same(lists.noToken, [], 'nor does the console without a token');
    t.same(lists.back, ["SELECT 'term one'"], 'the same token finds it again');
    t.notOk(
      lists.keys.some((key) => key.includes('term-one')),
      'the key holds no token',
    );
    t.same(problems, [], 'no script error');
  },
);
