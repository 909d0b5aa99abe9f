/**
 * The second 25 of the 50 kill-and-restart cycles with journal rotations
 * (fault-kill-rotation.test.ts runs the first 25): a file of its own so that
 * tap runs it beside the first half instead of after it.
 */
import t from 'tap';
import { killRotationCycles } from './helpers/kill-rotation';

t.setTimeout(240_000);

t.test('25 more SIGKILL cycles with rotations lose nothing acknowledged and invent nothing', (tt) =>
  killRotationCycles(tt, 25),
);
