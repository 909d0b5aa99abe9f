/**
 * A runaway statement in the middle of a lesson: while students run the
 * Chinook lesson (fixtures/chinook/lesson.json, the statements the bench
 * measures) on their own copies, one student's endless recursive query is
 * still stopped at -query-timeout with its error, and every other student
 * keeps getting the answers SQLite itself gives.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { CHINOOK_LESSON, CHINOOK_SCRIPT, importChinook } from './helpers/chinook';
import { isError } from './helpers/assertions';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type Reply, type TestServer } from './helpers/server';

t.setTimeout(180_000);

const SCRIPT = CHINOOK_SCRIPT;
const LESSON = CHINOOK_LESSON;
/** Never ends by itself: SQLite counts forever. */
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
const STUDENTS = ['ana', 'ben', 'cai'];
/** Each student's passes through the lesson at most: the loops are bounded whatever the machine's speed. */
const MAX_PASSES = 4;

/** What SQLite answers to each query of the lesson, as rows sorted when the query fixes no order. */
function expectedRows(): string[] {
  const db = new Database(':memory:');
  db.exec(SCRIPT);
  const answers = LESSON.map((query) => canonical(db.prepare(query.sql).raw(true).all() as unknown[][], query.ordered));
  db.close();
  return answers;
}

function canonical(rows: unknown[][], ordered?: false): string {
  const list = rows.map((row) => JSON.stringify(row));
  return JSON.stringify(ordered === false ? list.sort() : list);
}

interface Answer {
  student: string;
  index: number;
  reply: Reply;
  endedMs: number;
}

async function setUp(tt: Test): Promise<TestServer> {
  const dir = scratchDir(tt);
  // Every request comes from one address here: the whole pool is that class's (-client-share 1).
  const server = await startServer(['-dir', path.join(dir, 'data'), '-query-timeout', '1s', '-client-share', '1'], {
    cwd: dir,
  });
  tt.teardown(() => server.stop());
  await importChinook(server);
  const copied = await server.post('/dbs', { dbs: [...STUDENTS, 'runaway'], from: 'chinook' });
  tt.equal(copied.status, 201, copied.text.slice(0, 300));
  return server;
}

t.test('a runaway is stopped at -query-timeout while a class runs the lesson and gets right answers', async (tt) => {
  const server = await setUp(tt);
  const expected = expectedRows();

  let runawayEndedMs = Infinity;
  const startedMs = Date.now();
  const runaway = server.exec('runaway', RUNAWAY).then((reply) => {
    runawayEndedMs = Date.now();
    return reply;
  });
  const student = async (name: string, offset: number): Promise<Answer[]> => {
    const answers: Answer[] = [];
    // Until the runaway has been answered and a whole pass has been made after it (bounded by MAX_PASSES).
    for (let n = 0; n < LESSON.length * MAX_PASSES; n++) {
      const index = (offset + n) % LESSON.length;
      const reply = await server.exec(name, LESSON[index]?.sql ?? '');
      answers.push({ student: name, index, reply, endedMs: Date.now() });
      if (answers.filter((answer) => answer.endedMs > runawayEndedMs).length >= LESSON.length) break;
    }
    return answers;
  };
  const [stopped, ...classes] = await Promise.all([runaway, ...STUDENTS.map((name, i) => student(name, i * 17))]);

  isError(tt, stopped, 400, 6007, 'the runaway');
  tt.ok(runawayEndedMs - startedMs >= 1000, `not stopped before the 1 s limit (${runawayEndedMs - startedMs} ms)`);
  const answers = classes.flat();
  const wrong = answers.filter(
    (answer) =>
      answer.reply.status !== 200 ||
      canonical((answer.reply.body?.results?.[0]?.rows ?? []) as unknown[][], LESSON[answer.index]?.ordered) !==
        expected[answer.index],
  );
  tt.strictSame(
    wrong.map(
      (answer) => `${answer.student} #${answer.index}: ${answer.reply.status} ${answer.reply.text.slice(0, 200)}`,
    ),
    [],
    'every student statement answered as SQLite does',
  );
  const during = answers.filter((answer) => answer.endedMs < runawayEndedMs).length;
  tt.ok(during >= STUDENTS.length, `students were answered while the runaway ran (${during} of ${answers.length})`);
  const after = answers.filter((answer) => answer.endedMs > runawayEndedMs).length;
  tt.ok(after >= STUDENTS.length, `and after it was stopped (${after})`);

  const again = await server.exec('runaway', 'SELECT count(*) FROM Track');
  tt.equal(again.status, 200, 'the copy of the student whose query ran away still answers');
  tt.strictSame(again.body?.results?.[0]?.rows, [[3503]]);
});
