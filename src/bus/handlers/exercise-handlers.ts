/** The exercises: definitions (admin), listing and checking (every token), the class's progress and evidence (admin). */
import type { ExerciseService } from '../../exercises/exercise-service';
import type { Handlers } from '../command-bus';
import { STUCK_ATTEMPTS, STUCK_MINUTES } from '../../exercises/exercise-progress';

type ExerciseCommand =
  | 'list-exercises'
  | 'get-exercise'
  | 'exercise-tables'
  | 'create-exercise'
  | 'replace-exercise'
  | 'delete-exercise'
  | 'check-exercise'
  | 'exercise-progress'
  | 'own-progress'
  | 'exercise-evidence';

export function exerciseHandlers(exercises: ExerciseService): Pick<Handlers, ExerciseCommand> {
  return {
    // What a token sees of an exercise is the service's to decide (viewFor), from the principal.
    'list-exercises': async ({ set }, call) => ({ exercises: await exercises.list(set, call.principal) }),
    'get-exercise': ({ id }, call) => exercises.get(id, call.principal),
    'exercise-tables': ({ id }) => exercises.tables(id),
    'create-exercise': ({ body }, call) => exercises.create(body, call),
    'replace-exercise': ({ id, body }, call) => exercises.replace(id, body, call),
    'delete-exercise': ({ id }, call) => exercises.remove(id, call),
    'check-exercise': ({ id, body }, call) => exercises.check(id, body, call),
    'exercise-progress': ({ query }) => exercises.progress(query),
    'own-progress': ({ set }, call) =>
      exercises.mine(set, call.principal, { attempts: STUCK_ATTEMPTS, minutes: STUCK_MINUTES }),
    'exercise-evidence': ({ query, thresholds }) => exercises.evidence(query, thresholds),
  };
}
