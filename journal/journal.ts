/**
 * The journal as the server uses it: which events a level records, and the
 * entries it writes for them.
 */
import type { EngineError } from '../src/errors';
import { errorClass } from '../src/errors';
import type { BatchContext } from '../src/engine/deterministic-functions';
import type { SqlParams, StatementResult } from '../src/engine/protocol';
import type { JournalLevel, JournalStatement, RollbackReason } from './record';
import type { JournalEntry } from './record';
import {
  JournalWriter,
  type AppendListener,
  type ChunkShipper,
  type EngineChange,
  type JournalWriterOptions,
  type NewEntry,
} from './writer';

export type { AppendedEntry, AppendListener, ChunkPosition, ChunkShipper, EngineChange, ShippedChunk } from './writer';

export { JournalUnavailableError } from './unavailable';

/** What an entry is about: the level decides from this and from success. */
export type JournalEvent = 'read' | 'write' | 'session' | 'database' | 'refused' | 'attempt';

/** none < error < mod < all: each level records what the one below does, and more. */
function levelRecords(level: JournalLevel, event: JournalEvent, ok: boolean): boolean {
  // A refused request ran nothing and changed nothing: it belongs to the full record only, like a read.
  if (event === 'refused') return level === 'all';
  // An exercise's attempt is the class's record (progress is read from it): every level that keeps a journal keeps it.
  if (event === 'attempt') return level !== 'none';
  switch (level) {
    case 'none':
      return false;
    case 'error':
      return !ok && (event === 'read' || event === 'write');
    case 'mod':
      return !ok || event !== 'read';
    case 'all':
      return true;
  }
}

export interface BatchRecord {
  db: string;
  session: string | null;
  /** The SQL exactly as the client sent it, comments and whitespace included: replay splits it again. */
  sources: ReadonlyArray<{ sql: string; params?: SqlParams }>;
  /** The entry's `sql` instead of the sources joined (imports: the sources are the whole script already). */
  sql?: string;
  readonly: boolean;
  context: BatchContext;
  ms: number;
  results?: StatementResult[];
  error?: EngineError;
  /** The batch ran with foreign key enforcement off (ExecRequest.foreignKeys): replay must run it so. */
  foreignKeys?: 'off';
}

export class Journal {
  /** A replica's journal is a copy of its primary's: it takes copied entries only (appendCopied). */
  private following = false;

  private constructor(
    readonly level: JournalLevel,
    private readonly writer: JournalWriter | null,
  ) {}

  static disabled(): Journal {
    return new Journal('none', null);
  }

  static async open(level: JournalLevel, options: JournalWriterOptions): Promise<Journal> {
    if (level === 'none') return Journal.disabled();
    return new Journal(level, await JournalWriter.open(options));
  }

  /** Whether a successful write must be journaled before it commits (mod and all). */
  get recordsWrites(): boolean {
    return this.records('write', true);
  }

  records(event: JournalEvent, ok: boolean): boolean {
    return this.writer !== null && !this.following && levelRecords(this.level, event, ok);
  }

  /**
   * While on, the server's own events are not recorded (its entries would
   * take seqs its primary's need): a replica; a promotion turns it off.
   */
  follow(on: boolean): void {
    this.following = on;
  }

  /** Appends when the level records the event; the seq is null otherwise. */
  append(event: JournalEvent, entry: NewEntry): { seq: number | null; written: Promise<void> } {
    if (this.writer === null || !this.records(event, entry.ok)) return { seq: null, written: Promise.resolve() };
    return this.writer.append(entry);
  }

  /**
   * Appends entries that must be written together, or not at all: the ones
   * the level records go to the writer as one chunk. `seqs` are theirs.
   */
  appendAll(items: ReadonlyArray<{ event: JournalEvent; entry: NewEntry }>): {
    seqs: number[];
    written: Promise<void>;
  } {
    const recorded = items.filter(({ event, entry }) => this.records(event, entry.ok));
    if (this.writer === null || recorded.length === 0) return { seqs: [], written: Promise.resolve() };
    return this.writer.appendAll(recorded.map(({ entry }) => entry));
  }

  get lastSeq(): number {
    return this.writer?.lastSeq ?? 0;
  }

  /** See JournalWriter.engineChangedAtOpen. */
  get engineChangedAtOpen(): EngineChange | null {
    return this.writer?.engineChangedAtOpen ?? null;
  }

  /** Whether entries are written at all (-log-level none writes none). */
  get enabled(): boolean {
    return this.writer !== null;
  }

  /** See JournalWriter.shipThrough: a disabled journal has nothing to ship. */
  shipThrough(shipper: ChunkShipper | null): void {
    this.writer?.shipThrough(shipper);
  }

  /** See JournalWriter.appendCopied: a replica's copy of its primary's entries. */
  appendCopied(entries: readonly JournalEntry[]): Promise<void> {
    if (this.writer === null)
      return Promise.reject(new Error("a replica needs a journal (-log-file) to copy its primary's into"));
    return this.writer.appendCopied(entries);
  }

  /** See JournalWriter.startAfter: a replica's journal that begins after a snapshot round's base. */
  startAfter(seq: number): Promise<void> {
    if (this.writer === null)
      return Promise.reject(new Error('a replica needs a journal (-log-file) to start from a snapshot'));
    return this.writer.startAfter(seq);
  }

  /** See JournalWriter.onAppended; a disabled journal never calls the listener. */
  onAppended(listener: AppendListener): () => void {
    return this.writer?.onAppended(listener) ?? (() => undefined);
  }

  close(): Promise<void> {
    return this.writer?.close() ?? Promise.resolve();
  }
}

/** The entry of an executed batch, failed or not. */
export function batchEntry(record: BatchRecord): NewEntry {
  const statements: JournalStatement[] = record.sources.map((s) =>
    s.params === undefined ? { sql: s.sql } : { sql: s.sql, params: s.params },
  );
  const entry: NewEntry = {
    db: record.db,
    session: record.session,
    kind: 'exec',
    sql: record.sql ?? sqlOf(statements),
    statements,
    readonly: record.readonly,
    ok: record.error === undefined,
    ms: Math.round(record.ms * 1000) / 1000,
    clock: record.context.clockMs,
    seed: record.context.seed,
    ...(record.foreignKeys === undefined ? {} : { foreignKeys: record.foreignKeys }),
  };
  if (record.error !== undefined) return { ...entry, ...errorFields(record.error) };
  return { ...entry, changes: (record.results ?? []).reduce((sum, result) => sum + (result.changes ?? 0), 0) };
}

/** The entry's `sql`, for people and grep: one source exactly as sent, several one per line. */
export function sqlOf(sources: ReadonlyArray<{ sql: string }>): string {
  return sources.length === 1 ? (sources[0] as { sql: string }).sql : sources.map((s) => s.sql).join('\n');
}

export function errorFields(error: EngineError): Pick<NewEntry, 'code' | 'class' | 'error' | 'statement'> {
  const fields: Pick<NewEntry, 'code' | 'class' | 'error' | 'statement'> = {
    code: error.code,
    class: errorClass(error.code),
    error: error.message,
  };
  if (error.statement !== undefined) fields.statement = error.statement;
  return fields;
}

/** Entries of session and database events, which carry no statements. */
export function eventEntry(
  kind: NewEntry['kind'],
  db: string,
  session: string | null,
  extra: Partial<NewEntry> = {},
): NewEntry {
  return { db, session, kind, sql: null, ok: true, ms: 0, ...extra };
}

export type { RollbackReason };
