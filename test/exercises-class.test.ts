/**
 * The class flow over HTTP: a teacher writes three exercises over Chinook and
 * hands out thirty tokens; the students answer, right and wrong; the teacher
 * reads the progress (JSON and CSV, who is stuck as of a given time), and the
 * pilot evidence counts from the default thresholds and from their own. A
 * restart changes none of it.
 */
import path from 'node:path';
import t from 'tap';
import { importChinook } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type TestServer } from './helpers/server';

t.setTimeout(240_000);

const ADMIN = 'teacher-secret';
const root = scratchDir(t);
const args = ['-dir', path.join(root, 'data'), '-token', ADMIN];
let server: TestServer;

const LESSON = [
  {
    id: 'artists',
    set: 'chinook-1',
    title: 'How many artists?',
    prompt: 'Count the artists.',
    template: 'chinook',
    solution: 'SELECT count(*) FROM Artist',
  },
  {
    id: 'jazz',
    set: 'chinook-1',
    title: 'Jazz tracks',
    prompt: 'The names of the Jazz tracks.',
    template: 'chinook',
    solution: "SELECT t.Name FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'Jazz'",
  },
  {
    id: 'top-country',
    set: 'chinook-1',
    title: 'Best country',
    prompt: 'The country with the most revenue, and the revenue.',
    template: 'chinook',
    solution: 'SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY BillingCountry ORDER BY 2 DESC LIMIT 1',
  },
];
const RIGHT: Record<string, string> = {
  artists: 'SELECT COUNT(ArtistId) AS n FROM Artist',
  jazz: "SELECT Name FROM Track WHERE GenreId = (SELECT GenreId FROM Genre WHERE Name = 'Jazz')",
  'top-country':
    'SELECT BillingCountry AS c, ROUND(SUM(Total), 2) AS r FROM Invoice GROUP BY c ORDER BY r DESC LIMIT 1',
};
const WRONG: Record<string, string> = {
  artists: 'SELECT count(*) FROM Album',
  jazz: 'SELECT Name FROM Track WHERE GenreId = 1',
  'top-country': 'SELECT BillingCountry FROM Invoice LIMIT 1',
};
const IDS = LESSON.map((exercise) => exercise.id);

/** Student n (1–30) solves: 1–10 none, 11–20 one, 21–25 two, 26–30 all three. */
function solvedBy(n: number): number {
  return n <= 10 ? 0 : n <= 20 ? 1 : n <= 25 ? 2 : 3;
}

const secrets = new Map<string, string>();

async function check(token: string, id: string, sql: string): Promise<{ correct: boolean }> {
  const reply = await server.request('POST', `/exercises/${id}/check`, {
    body: { sql },
    headers: { 'X-Service-Token': secrets.get(token) as string },
  });
  if (reply.status !== 200) throw new Error(`check ${id} by ${token}: ${reply.text}`);
  return reply.body;
}

t.before(async () => {
  server = await startServer(args, { cwd: root, headers: { 'X-Service-Token': ADMIN } });
  await importChinook(server);
  for (const exercise of LESSON) {
    const made = await server.post('/exercises', exercise);
    if (made.status !== 201) throw new Error(made.text);
  }
  const tokens = await server.post('/tokens', { prefix: 'alumno', count: 30, role: 'write', from: 'chinook' });
  if (tokens.status !== 201) throw new Error(tokens.text);
  for (const token of tokens.body.tokens as Array<{ name: string; secret: string }>)
    secrets.set(token.name, token.secret);
});
t.teardown(async () => {
  await server?.stop();
});

t.test('thirty students answer; progress and evidence count them', async (t) => {
  t.same(
    (await server.get('/exercises?set=chinook-1')).body.exercises.map((e: { id: string; position: number }) => [
      e.id,
      e.position,
    ]),
    [
      ['artists', 1],
      ['jazz', 2],
      ['top-country', 3],
    ],
    'positions follow the order of writing',
  );
  for (let n = 1; n <= 30; n++) {
    const name = `alumno-${String(n).padStart(2, '0')}`;
    const solves = solvedBy(n);
    for (const [index, id] of IDS.entries()) {
      if (n % 2 === 0 || index >= solves) t.equal((await check(name, id, WRONG[id] as string)).correct, false);
      if (index < solves) t.equal((await check(name, id, RIGHT[id] as string)).correct, true, `${name} solves ${id}`);
    }
  }
  // alumno-01 keeps failing the first exercise: four wrong answers in a row.
  for (let i = 0; i < 3; i++) await check('alumno-01', 'artists', 'SELECT 1');

  const mine = await server.request('GET', '/exercises/mine?set=chinook-1', {
    headers: { 'X-Service-Token': secrets.get('alumno-21') as string },
  });
  t.match(
    mine.body,
    {
      ok: true,
      set: 'chinook-1',
      token: 'alumno-21',
      solved: 2,
      exercises: [
        { exercise: 'artists', state: 'solved' },
        { exercise: 'jazz', state: 'solved' },
        { exercise: 'top-country', state: 'tried' },
      ],
    },
    'a student reads their own row',
  );

  const progress = await server.get('/exercises/progress?set=chinook-1');
  t.equal(progress.status, 200);
  t.same(
    progress.body.exercises.map((e: { id: string }) => e.id),
    IDS,
  );
  t.equal(progress.body.students.length, 30, 'every student token, and not the admin');
  t.match(progress.body.stuck, { attempts: 3, minutes: 10 });
  for (const row of progress.body.students as Array<{
    token: string;
    solved: number;
    exercises: Array<{ state: string; attempts: number }>;
  }>) {
    const n = Number(row.token.slice(-2));
    t.equal(row.solved, solvedBy(n), `${row.token} solved ${solvedBy(n)}`);
  }
  const first = progress.body.students[0];
  t.match(
    first,
    {
      token: 'alumno-01',
      solved: 0,
      stuck: 1,
      exercises: [
        { exercise: 'artists', attempts: 4, failed: 4, solved: false, stuck: true, state: 'stuck' },
        { state: 'tried' },
        { state: 'tried' },
      ],
    },
    'four wrong answers in ten minutes: stuck',
  );
  const last = progress.body.students[29];
  t.match(last, {
    token: 'alumno-30',
    solved: 3,
    exercises: [{ state: 'solved', attempts: 2, failed: 1, lastErrorClass: null }],
  });
  t.type(last.exercises[0].solvedAt, 'string');

  const later = await server.get(
    `/exercises/progress?set=chinook-1&token=alumno-0*&at=${new Date(Date.now() + 11 * 60_000).toISOString()}`,
  );
  t.equal(later.body.students.length, 9, 'a glob of token names picks the students');
  t.match(
    later.body.students[0],
    { token: 'alumno-01', stuck: 0, exercises: [{ state: 'tried', stuck: false }] },
    "eleven minutes on, no longer stuck (the clock is the caller's)",
  );
  const strict = await server.get('/exercises/progress?set=chinook-1&token=alumno-01&stuck_attempts=5');
  t.match(strict.body.students[0].exercises[0], { stuck: false }, 'stuck after five wrong answers: not yet');

  const csv = await server.get('/exercises/progress?set=chinook-1&format=csv');
  t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  const lines = csv.text.trim().split('\r\n');
  t.equal(lines[0], 'token,solved,attempts,artists,jazz,top-country');
  t.equal(lines.length, 31);
  t.equal(lines[1], 'alumno-01,0,6,0,0,0');
  t.equal(lines[30], 'alumno-30,3,6,1,1,1');
  t.equal(lines[11], 'alumno-11,1,3,1,0,0');

  const evidence = await server.get('/exercises/evidence?set=chinook-1');
  t.equal(evidence.status, 200);
  t.same(evidence.body.thresholds, { en_desarrollo: 1, logrado: 2, profundizado: 3 });
  t.same(
    evidence.body.aggregate_evidence,
    { aun_no_observable: 10, en_desarrollo: 10, logrado: 5, profundizado: 5 },
    'the default thresholds',
  );
  t.match(evidence.body, { set: 'chinook-1', exercises: 3, students: 30 });
  const own = await server.get('/exercises/evidence?set=chinook-1&en_desarrollo=2&logrado=100%25&profundizado=3');
  t.same(
    own.body.aggregate_evidence,
    { aun_no_observable: 20, en_desarrollo: 5, logrado: 0, profundizado: 5 },
    "the teacher's thresholds",
  );
  t.match(await server.get('/exercises/evidence?set=chinook-1&logrado=4'), { status: 400, body: { code: 1008 } });
  t.match(await server.get('/exercises/evidence?set=chinook-1&logrado=3&profundizado=2'), {
    status: 400,
    body: { code: 1008 },
  });
  t.match(await server.get('/exercises/evidence'), { status: 400, body: { code: 1008 } });
  t.match(await server.get('/exercises/evidence?set=empty'), { status: 400, body: { code: 1008 } });

  // The pilot record takes the counts as they are.
  const pilot = await server.post('/pilots', {
    date: '2026-11-26',
    responsible_role: 'docente',
    scope: { level: 'secundaria', subject: 'bases de datos', objective: 'consultas', class_codes: ['4A'] },
    commit: 'abcdef1',
    planned_minutes: 50,
    actual_minutes: 55,
    aggregate_evidence: evidence.body.aggregate_evidence,
    incidents: [],
    decision: 'conservar',
  });
  t.equal(pilot.status, 201, pilot.text);

  await server.stop();
  server = await startServer(args, { cwd: root, headers: { 'X-Service-Token': ADMIN } });
  const again = await server.get('/exercises/progress?set=chinook-1');
  t.same(again.body.students, progress.body.students, 'the same progress after a restart');
  t.same(
    (await server.get('/exercises/evidence?set=chinook-1')).body.aggregate_evidence,
    evidence.body.aggregate_evidence,
    'and the same evidence',
  );
});
