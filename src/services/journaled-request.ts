/** A write batch on its way through the write path: what the engine runs, and what the journal records of it. */
import type { ExecRequest, ExecStatement } from '../engine/protocol';
import type { JournalStatement } from '../../journal/record';

export interface JournaledRequest {
  readonly request: ExecRequest;
  /** The SQL exactly as the client sent it. */
  readonly sources: readonly JournalStatement[];
}

/** The statements' own text, for batches the service makes itself (nothing was sent). */
export function sourcesOf(statements: readonly ExecStatement[]): JournalStatement[] {
  return statements.map(({ sql, params }) => (params === undefined ? { sql } : { sql, params }));
}
