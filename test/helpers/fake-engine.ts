/** An engine host that only opens sessions, and records what was asked of them. */
import type { EngineSession, JournalPosition } from '../../src/engine/protocol';

export class FakeEngine {
  readonly calls: string[] = [];
  applied = 0;
  endError: Error | undefined;
  /** When set, a session's exec waits for it: a request still running. */
  execGate: Promise<void> | undefined;

  async openSession(): Promise<EngineSession> {
    this.calls.push('open');
    return {
      exec: async () => {
        this.calls.push('exec');
        await this.execGate;
        return [{ columns: [], rows: [], changes: 1 }];
      },
      end: async (commit: boolean, seq?: number) => {
        this.calls.push(commit ? `commit ${seq}` : 'rollback');
        if (commit && this.endError) throw this.endError;
        if (commit && seq !== undefined) this.applied = seq;
      },
      onLost: () => undefined,
    };
  }

  async journalPosition(): Promise<JournalPosition> {
    return { applied: this.applied, created: 0 };
  }
}
