/** A write batch on its way through the write path: what the engine runs, and what the journal records of it. */
import type { ExecRequest, ExecStatement } from '../../engine/protocol';
import type { JournalStatement } from '../../../journal/record';
import type { TokenStamp } from '../../access/principal';

export interface JournaledRequest {
  readonly request: ExecRequest;
  /** The SQL exactly as the client sent it. */
  readonly sources: readonly JournalStatement[];
  /** The token that sent it, for its journal entry: taken at queueing, as a group's entries are written by whichever request runs the group. */
  readonly by?: TokenStamp;
  /** The entry's `sql` when it must not repeat the sources (an import's: a megabyte script would be journaled twice). */
  readonly summary?: string;
}

/** The statements' own text, for batches the service makes itself (nothing was sent). */
export function sourcesOf(statements: readonly ExecStatement[]): JournalStatement[] {
  return statements.map(({ sql, params }) => (params === undefined ? { sql } : { sql, params }));
}
