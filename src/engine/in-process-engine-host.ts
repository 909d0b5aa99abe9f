/**
 * An EngineHost that runs the engine in this process. The command bus only
 * sees the asynchronous EngineHost interface, so a host in child processes can
 * take this one's place.
 */
import { Engine, type EngineOptions } from './engine';
import type { EngineHost, EngineSession, ExecRequest, HeldGroup, JournalPosition, RowPage, RowsRequest, StatementResult } from './protocol';
import type { TableSchema } from './schema';

export class InProcessEngineHost implements EngineHost {
  private readonly engine: Engine;

  constructor(options: EngineOptions = {}) {
    this.engine = new Engine(options);
  }

  async exec(request: ExecRequest): Promise<StatementResult[]> {
    return this.engine.exec(request);
  }

  async execHeldGroup(requests: readonly ExecRequest[]): Promise<HeldGroup> {
    const outcomes = this.engine.execHeldGroup(requests);
    return { outcomes, commit: async (seq) => this.engine.commitHeld(seq), rollback: async () => this.engine.rollbackHeld() };
  }

  async journalPosition(file: string): Promise<JournalPosition> {
    return this.engine.journalPosition(file);
  }

  async tables(file: string): Promise<TableSchema[]> {
    return this.engine.tables(file);
  }

  async schema(file: string, table: string): Promise<TableSchema | undefined> {
    return this.engine.schema(file, table);
  }

  async rows(request: RowsRequest): Promise<RowPage> {
    return this.engine.rows(request);
  }

  /** In one process nothing can be lost without everything being lost. */
  async openSession(file: string): Promise<EngineSession> {
    this.engine.beginSession(file);
    return {
      exec: async (request) => this.engine.execInSession(request),
      end: async (commit, seq) => this.engine.endSession(commit, seq),
      onLost: () => undefined,
    };
  }

  async createDatabase(file: string, createdSeq?: number): Promise<void> {
    this.engine.createDatabase(file, createdSeq);
  }

  async closeDatabase(file: string): Promise<void> {
    this.engine.closeDatabase(file);
  }

  async close(): Promise<void> {
    this.engine.close();
  }
}
