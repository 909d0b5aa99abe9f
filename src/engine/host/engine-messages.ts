/** The messages between the parent and an engine process. */
import type { EngineErrorData } from '../../errors';

export type EngineMethod =
  | 'exec' | 'execHeldGroup' | 'commitHeld' | 'rollbackHeld' | 'journalPosition'
  | 'tables' | 'schema' | 'rows' | 'createDatabase' | 'closeDatabase'
  | 'beginSession' | 'execInSession' | 'endSession';

export interface EngineCall {
  id: number;
  method: EngineMethod;
  args: unknown[];
}

export type EngineReply =
  | { id: number; kind: 'result'; value: unknown }
  | { id: number; kind: 'error'; error: EngineErrorData }
  /** The process has loaded and listens: a call's time starts counting from here. */
  | { id: 0; kind: 'ready' };
