/**
 * The one definition of what the server may ask an engine process: each
 * method's arguments and answer. The process side (engine-process.ts) must
 * answer every method with exactly these types, and the host side
 * (process-engine-host.ts) can only send a method with its own arguments
 * and is handed its own answer: the compiler checks both against this table.
 * Adding a method is a line here and a line there.
 */
import type { EngineErrorData } from '../../errors';
import type { JournalPosition, RowPage, RowsRequest } from '../protocol';
import type { TableSchema } from '../schema/schema';
import type { ExportRequest } from '../transfer/database-export';
import type { PackedOutcome, PackedResults } from './packed-results';
import type { PackedRequest } from './packed-requests';

/** Arguments and answers must survive structured clone: plain data only, `null` rather than `undefined` for "none". */
export interface EngineMethods {
  /** A batch in its own transaction, committed. Batches and results cross packed (packed-requests.ts, packed-results.ts). */
  exec(request: PackedRequest): PackedResults;
  /** Batches in one transaction, each in a savepoint, left open for commitHeld or rollbackHeld. */
  execHeldGroup(requests: readonly PackedRequest[]): PackedOutcome[];
  commitHeld(seq: number): void;
  rollbackHeld(): void;
  journalPosition(file: string): JournalPosition;
  tables(file: string): TableSchema[];
  schema(file: string, table: string): TableSchema | null;
  rows(request: RowsRequest): RowPage;
  exportDatabase(file: string, request: ExportRequest): void;
  uploadStatements(file: string): string[];
  createDatabase(file: string, createdSeq?: number): void;
  closeDatabase(file: string): void;
  /** `target` becomes a copy of `source`'s committed state, with its own position and template. */
  copyDatabase(source: string, target: string, seq: number | null, template: string): void;
  /** A transaction held open across calls (a session) on this process. */
  beginSession(file: string): void;
  execInSession(request: PackedRequest): PackedResults;
  endSession(commit: boolean, seq?: number): void;
}

export type EngineMethod = keyof EngineMethods;
export type ArgsOf<M extends EngineMethod> = Parameters<EngineMethods[M]>;
export type AnswerOf<M extends EngineMethod> = ReturnType<EngineMethods[M]>;

/** A method with its arguments; `method` and `args` always agree. */
export type EngineRequest = { [M in EngineMethod]: { readonly method: M; readonly args: ArgsOf<M> } }[EngineMethod];

/** A request as it crosses to the process, numbered so that its reply finds it. */
export type EngineCall = EngineRequest & { readonly id: number };

/**
 * The request for `method`. A generic method cannot be checked against the
 * union by the compiler; the signature does the checking, so the widening
 * happens here only.
 */
export function requestOf<M extends EngineMethod>(method: M, args: ArgsOf<M>): EngineRequest {
  return { method, args } as EngineRequest;
}

export type EngineReply =
  | { id: number; kind: 'result'; value: unknown }
  | { id: number; kind: 'error'; error: EngineErrorData }
  /** The process has loaded and listens: a call's time starts counting from here. */
  | { id: 0; kind: 'ready' };
