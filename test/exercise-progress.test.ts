/**
 * The progress of a class as a unit (src/exercises/exercise-progress.ts),
 * on an injected clock: solved and when, the last error's class, and "stuck"
 * as several wrong answers within the last minutes, judged as of the clock.
 */
import t from 'tap';
import { Journal } from '../journal/journal';
import { ExerciseProgress, STUCK_ATTEMPTS, STUCK_MINUTES } from '../src/exercises/exercise-progress';
import type { StoredExercise } from '../src/exercises/exercise-definition';
import { FakeClock } from './helpers/fake-clock';

const exercise = (id: string): StoredExercise => ({
  id,
  set: 'lesson',
  position: 1,
  title: id,
  prompt: '',
  template: 'chinook.db',
  solution: 'SELECT 1',
  order: 'any',
  columns: 'position',
  tolerance: 0,
  check: null,
  showRows: false,
  updated: '2026-11-25T08:00:00Z',
  revision: 1,
});
const RULE = { attempts: STUCK_ATTEMPTS, minutes: STUCK_MINUTES };

t.test('stuck is several wrong answers in the last minutes, as of the clock', async (t) => {
  const clock = new FakeClock();
  const progress = new ExerciseProgress(Journal.disabled(), null, clock);
  const attempt = (tokenName: string, id: string, correct: boolean, errorClass?: number): void =>
    progress.noteUnjournaled({
      ts: new Date(clock.now()).toISOString(),
      tokenName,
      exercise: id,
      correct,
      ...(errorClass === undefined ? {} : { class: errorClass }),
    });
  attempt('ana', 'a', false, 2);
  clock.advance(60_000);
  attempt('ana', 'a', false);
  clock.advance(60_000);
  attempt('ana', 'a', false, 1);
  attempt('bea', 'a', false);
  attempt('bea', 'a', true);
  const exercises = [exercise('a'), exercise('b')];
  const [ana, bea, cai] = await progress.grid(['ana', 'bea', 'cai'], exercises, RULE);
  t.match(ana, {
    token: 'ana',
    solved: 0,
    attempts: 3,
    stuck: 1,
    exercises: [
      { exercise: 'a', attempts: 3, failed: 3, solved: false, lastErrorClass: 1, stuck: true, state: 'stuck' },
      { state: 'not-tried' },
    ],
  });
  t.match(bea, {
    solved: 1,
    stuck: 0,
    exercises: [{ solved: true, solvedAt: new Date(clock.now()).toISOString(), state: 'solved' }],
  });
  t.match(
    cai,
    { solved: 0, attempts: 0, exercises: [{ state: 'not-tried' }, { state: 'not-tried' }] },
    'a token that never answered has its row',
  );
  // Ten and a half minutes after the first wrong answer: two of the three are in the window.
  clock.advance(STUCK_MINUTES * 60_000 - 90_000);
  t.match(
    (await progress.grid(['ana'], exercises, RULE))[0]?.exercises[0],
    { stuck: false, state: 'tried' },
    'the first wrong answer left the window: no longer stuck',
  );
  t.match(
    (await progress.grid(['ana'], exercises, { attempts: 2, minutes: STUCK_MINUTES }))[0]?.exercises[0],
    { stuck: true },
    'a rule of two: still stuck',
  );
  t.match(
    (await progress.grid(['ana'], exercises, RULE, clock.now() - 60_000))[0]?.exercises[0],
    { stuck: true },
    'judged at an earlier time, it was',
  );
  t.same(await progress.students(), ['ana', 'bea']);
});
