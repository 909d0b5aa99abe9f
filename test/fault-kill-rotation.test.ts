/**
 * SIGKILL at random moments, half of them right after a journal rotation:
 * the first 25 of 50 kill-and-restart cycles (test/helpers/kill-rotation.ts
 * says what every start must show). The other 25 run in
 * fault-kill-rotation-2.test.ts, in a data directory of their own, so that
 * the two halves run side by side.
 */
import t from 'tap';
import { killRotationCycles } from './helpers/kill-rotation';

t.setTimeout(240_000);

t.test('25 SIGKILL cycles with rotations lose nothing acknowledged and invent nothing', (tt) =>
  killRotationCycles(tt, 25),
);
