/**
 * Runs an auto-commit batch on one database and journals it (decisions §6):
 * a write runs in a transaction that stays open until its journal entry is
 * written, then commits; the client is answered after that. So a batch is
 * acknowledged only after its entry is written, and no committed change
 * escapes the journal. Writes that queue up for the same database run in
 * groups (write-groups.ts).
 */
import { EngineError } from '../errors';
import { newBatchContext } from '../engine/deterministic-functions';
import type { EngineHost, ExecRequest, ExecStatement, StatementResult } from '../engine/protocol';
import { batchEntry, type Journal } from '../../journal/journal';
import type { DatabaseRef } from './database-directory';
import { withWriteLock } from './lock-errors';
import { WriteGroups } from './write-groups';
import type { WriteLocks } from './write-locks';

export interface BatchRunnerOptions {
  lockTimeoutMs: number;
  maxResultRows: number;
}

export class BatchRunner {
  private readonly groups: WriteGroups;

  constructor(
    private readonly engine: EngineHost,
    private readonly journal: Journal,
    private readonly locks: WriteLocks,
    private readonly options: BatchRunnerOptions,
    /** Brings a database back in line with the journal when a commit after a written entry failed. */
    repair: (ref: DatabaseRef) => Promise<void>,
  ) {
    this.groups = new WriteGroups(engine, journal, locks, { lockTimeoutMs: options.lockTimeoutMs, repair });
  }

  /** With `jsonRows`, the results carry their rows as JSON text for a response (ExecRequest.jsonRows). */
  async run(ref: DatabaseRef, statements: readonly ExecStatement[], readonly: boolean, jsonRows = false): Promise<StatementResult[]> {
    const request: ExecRequest = { file: ref.file, statements, maxResultRows: this.options.maxResultRows, context: newBatchContext(), jsonRows };
    if (readonly) return this.journaled(ref, request, true, () => this.engine.exec(request));
    if (this.journal.recordsWrites) return this.groups.run(ref, request);
    return withWriteLock(this.locks, ref, this.options.lockTimeoutMs, () => this.journaled(ref, request, false, () => this.engine.exec(request)));
  }

  /** Runs the work, then journals the outcome if the level records it; a failure is journaled before it is answered. */
  private async journaled(ref: DatabaseRef, request: ExecRequest, readonly: boolean, work: () => Promise<StatementResult[]>): Promise<StatementResult[]> {
    const started = performance.now();
    try {
      const results = await work();
      await this.record(ref, request, readonly, started, { results });
      return results;
    } catch (error) {
      if (error instanceof EngineError) await this.record(ref, request, readonly, started, { error });
      throw error;
    }
  }

  private async record(ref: DatabaseRef, request: ExecRequest, readonly: boolean, started: number, outcome: { results?: StatementResult[]; error?: EngineError }): Promise<void> {
    const event = readonly ? 'read' : 'write';
    if (!this.journal.records(event, outcome.error === undefined)) return;
    const entry = batchEntry({ db: ref.name, session: null, statements: request.statements, readonly, context: request.context!, ms: performance.now() - started, ...outcome });
    await this.journal.append(event, entry).written;
  }
}
