/** begin-session, end-session: transactions held open across requests. */
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { SessionManager } from '../../sessions/session-manager';
import type { Handlers } from '../command-bus';

export function sessionHandlers(
  directory: DatabaseDirectory,
  sessions: SessionManager,
): Pick<Handlers, 'begin-session' | 'end-session'> {
  return {
    'begin-session': ({ db }, call) => sessions.begin(directory.resolve(db), call.principal),
    'end-session': async ({ session, commit }, call) => {
      const ref = await sessions.end(session, commit, call.principal);
      return { db: ref.name, message: commit ? 'COMMIT' : 'ROLLBACK' };
    },
  };
}
