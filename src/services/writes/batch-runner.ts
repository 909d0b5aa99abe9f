/**
 * Runs an auto-commit batch on one database and journals it. A journaled
 * write runs in a transaction that stays open until its entry is durable,
 * then commits (write-groups.ts, through the write path); the client is
 * answered after that. Reads, and writes at levels that do not record them,
 * run at once; their entries (when the level records them) change nothing,
 * so a journal failure never stops them.
 */
import { EngineError } from '../../errors';
import { newBatchContext } from '../../engine/deterministic-functions';
import type { CallContext, EngineHost, ExecRequest, ExecStatement, StatementResult } from '../../engine/protocol';
import { batchEntry, type Journal } from '../../../journal/journal';
import type { JournalStatement } from '../../../journal/record';
import { sourcesOf, type JournaledRequest } from './journaled-request';
import { databaseLimitBytes, stampOf } from '../../access/principal';
import type { DatabaseRef } from '../databases/database-directory';
import { withWriteLock } from './lock-errors';
import { WriteGroups } from './write-groups';
import type { WriteLocks } from './write-locks';
import type { WritePath } from './write-path';

export interface BatchRunnerOptions {
  lockTimeoutMs: number;
  maxResultRows: number;
  maxResultBytes: number;
  /** -max-database-mb: the bound of a batch whose token carries none of its own. */
  maxDatabaseMb?: number;
}

export interface RunOptions {
  /** The results carry their rows as JSON text for a response (ExecRequest.jsonRows). */
  jsonRows?: boolean;
  /** The SQL exactly as the client sent it, for the journal; the statements' own text when absent. */
  sources?: readonly JournalStatement[];
  /** The request's deadline and client: the work stops with the request. */
  call?: CallContext;
  /** See JournaledRequest.summary. */
  summary?: string;
  /** See ExecRequest.foreignKeys. */
  foreignKeys?: 'off';
}

export class BatchRunner {
  private readonly groups: WriteGroups;

  constructor(
    private readonly engine: EngineHost,
    private readonly journal: Journal,
    private readonly path: WritePath,
    private readonly locks: WriteLocks,
    private readonly options: BatchRunnerOptions,
  ) {
    this.groups = new WriteGroups(engine, path, locks, { lockTimeoutMs: options.lockTimeoutMs });
  }

  async run(
    ref: DatabaseRef,
    statements: readonly ExecStatement[],
    readonly: boolean,
    options: RunOptions = {},
  ): Promise<StatementResult[]> {
    const call = options.call ?? {};
    const request: ExecRequest = {
      file: ref.file,
      statements,
      maxResultRows: this.options.maxResultRows,
      maxResultBytes: this.options.maxResultBytes,
      context: newBatchContext(),
      jsonRows: options.jsonRows === true,
      // Whoever sends the batch: a server's own writes (exercises, pilots) have no principal and get the flag's bound.
      maxDatabaseBytes: databaseLimitBytes(call.principal, this.options.maxDatabaseMb),
      ...(options.foreignKeys === undefined ? {} : { foreignKeys: options.foreignKeys }),
    };
    const batch: JournaledRequest = {
      request,
      sources: options.sources ?? sourcesOf(statements),
      by: stampOf(call.principal),
      ...(options.summary === undefined ? {} : { summary: options.summary }),
    };
    if (readonly) return this.noted(ref, batch, true, () => this.engine.exec(request, call));
    if (this.journal.recordsWrites) return this.groups.run(ref, batch, call);
    return withWriteLock(this.locks, ref, this.options.lockTimeoutMs, () =>
      this.noted(ref, batch, false, () => this.engine.exec(request, call)),
    );
  }

  /** Runs work whose entry changes nothing, then notes its outcome; a failure is noted before it is answered. */
  private async noted(
    ref: DatabaseRef,
    batch: JournaledRequest,
    readonly: boolean,
    work: () => Promise<StatementResult[]>,
  ): Promise<StatementResult[]> {
    const started = performance.now();
    const note = (outcome: { results?: StatementResult[]; error?: EngineError }): Promise<void> =>
      this.path.note(
        readonly ? 'read' : 'write',
        () => ({
          ...batchEntry({
            db: ref.name,
            session: null,
            sources: batch.sources,
            ...(batch.summary === undefined ? {} : { sql: batch.summary }),
            readonly,
            context: batch.request.context!,
            ms: performance.now() - started,
            ...(batch.request.foreignKeys === undefined ? {} : { foreignKeys: batch.request.foreignKeys }),
            ...outcome,
          }),
          ...batch.by,
        }),
        outcome.error === undefined,
      );
    try {
      const results = await work();
      await note({ results });
      return results;
    } catch (error) {
      if (error instanceof EngineError) await note({ error });
      throw error;
    }
  }
}
