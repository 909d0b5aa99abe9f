/**
 * Applies journal entries to databases, with the same engine code that ran
 * them live: crash recovery at start-up and the replay tool both
 * come through here. Every batch gets back the clock and the seed it ran with,
 * so it gives the same values.
 */
import fs from 'node:fs';
import { inspect } from 'node:util';
import { EngineError } from '../src/errors';
import { classifyStatement } from '../src/engine/dialect/classify';
import { splitStatements } from '../src/engine/dialect/split';
import type { Engine } from '../src/engine/engine';
import { withParams, type ExecRequest, type ExecStatement, type StatementText } from '../src/engine/protocol';
import type { JournalEntry, JournalStatement } from '../journal/record';

/**
 * Failures that depend on time or on a process, not on the SQL: replaying them means nothing. The
 * size bound (6060, 6062) is the live server's and its token's, which replay does not apply: a
 * request refused by it changed nothing live (its statements were undone, or the session's
 * transaction was rolled back and a rollback entry follows).
 */
const UNREPEATABLE_CODES = new Set([6007, 6008, 6060, 6062, 9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008]);

export class ReplayError extends Error {
  constructor(
    readonly entry: JournalEntry,
    message: string,
  ) {
    super(`entry seq ${entry.seq} (${entry.kind} on ${entry.db ?? 'the directory'}): ${message}`);
  }
}

/**
 * Splits of recent source texts (replayed journals repeat a few statement
 * shapes over and over): splitting and classifying again cost more than
 * running a small INSERT. Both depend on the text alone.
 */
const SPLIT_CACHE_SIZE = 1024;
const SPLIT_CACHE_MAX_LENGTH = 4096;

/**
 * The statements of one journaled source. The journal keeps the SQL exactly
 * as it was sent, comments and all, so it is split again here by the same
 * splitter that split it live (a source with parameters holds one statement).
 */
function splitSource(sql: string): StatementText[] {
  return splitStatements(sql).map((text) => {
    const classified = classifyStatement(text);
    return classified.savepoint === undefined
      ? { sql: text, kind: classified.kind }
      : { sql: text, kind: classified.kind, savepoint: classified.savepoint };
  });
}

class SourceSplits {
  private readonly known = new Map<string, readonly StatementText[]>();

  of(sql: string): readonly StatementText[] {
    const known = this.known.get(sql);
    if (known !== undefined) return known;
    const split = splitSource(sql);
    if (sql.length <= SPLIT_CACHE_MAX_LENGTH) {
      if (this.known.size >= SPLIT_CACHE_SIZE) this.known.clear();
      this.known.set(sql, split);
    }
    return split;
  }

  /** What the engine runs for one source: its statements, each with the source's parameters. */
  execStatements(source: JournalStatement, into: ExecStatement[]): void {
    for (const statement of this.of(source.sql))
      into.push(source.params === undefined ? statement : withParams(statement, source.params));
  }
}

/**
 * Whether `entry` changes database `db` from outside any session, which live
 * cannot happen while a session holds `db`: a session open on `db` was cut
 * short there (see JournalApplier.endSessionCutShort). Exported for a replica,
 * which must know as the applier does when a session it carries over has ended.
 */
export function cutsSessionShort(entry: JournalEntry, db: string): boolean {
  if (entry.session !== null || entry.db !== db) return false;
  return (
    entry.kind === 'createdb' ||
    entry.kind === 'dropdb' ||
    entry.kind === 'copydb' ||
    entry.kind === 'resetdb' ||
    entry.kind === 'restoredb' ||
    (entry.kind === 'exec' && entry.ok && entry.readonly !== true)
  );
}

export class JournalApplier {
  /** The session open in the journal at this point, if any (one at a time, as live). */
  private session: { id: string; db: string } | null = null;
  private readonly splits = new SourceSplits();
  /** fileOf by database name, worked out once per name rather than once per entry. */
  private readonly files = new Map<string, string>();

  constructor(
    private readonly engine: Engine,
    private readonly fileOf: (db: string) => string,
  ) {}

  apply(entry: JournalEntry): void {
    this.endSessionCutShort(entry);
    switch (entry.kind) {
      case 'createdb':
        return this.createDatabase(entry);
      case 'dropdb':
        return this.dropDatabase(entry);
      case 'copydb':
      case 'resetdb':
        return this.copyDatabase(entry);
      case 'begin':
        return this.begin(entry);
      case 'exec':
        return entry.session === null ? this.exec(entry) : this.execInSession(entry);
      case 'commit':
        return this.endSession(entry, true);
      case 'rollback':
        return this.endSession(entry, false);
      case 'restoredb':
        throw new ReplayError(
          entry,
          'a restore is applied by rebuild (rebuild.ts), which rebuilds the state it puts in place',
        );
      case 'void':
        return; // rebuild leaves out the entries a void names; the void itself changes nothing
      case 'refused':
        return; // an audit trace: the request never reached the database
      case 'attempt':
        return; // an exercise's answer ran on a scratch copy that was thrown away
    }
  }

  /**
   * Live, a session holds its database from begin to commit or rollback, so no change to that
   * database from outside the session is journaled in between. One that is means the process died
   * with the session open (a killed process journals no rollback) and SQLite rolled it back: so
   * does replay, or the change would wait forever for the session's lock ("database is locked").
   * Public for the entries replay gathers into a batch (entry-batch.ts): the session ends when
   * the entry is gathered, before the batch's transaction begins.
   */
  endSessionCutShort(entry: JournalEntry): void {
    if (this.session === null || !cutsSessionShort(entry, this.session.db)) return;
    this.engine.endSession(false);
    this.session = null;
  }

  /** Gives up on a database (its entries can no longer be applied): a session open on it is rolled back. */
  abandon(db: string): void {
    if (this.session?.db !== db) return;
    this.engine.endSession(false);
    this.session = null;
  }

  /** Ends the replay: a session still open was never committed. */
  finish(): void {
    if (this.session !== null) this.engine.endSession(false);
    this.session = null;
  }

  /** What the engine runs for an exec entry: its statements with the clock and the seed they ran with. */
  request(entry: JournalEntry): ExecRequest {
    const statements: ExecStatement[] = [];
    for (const source of entry.statements ?? []) this.splits.execStatements(source, statements);
    // No rows are kept: only the changes matter (a RETURNING statement still runs to its end).
    return {
      file: this.fileOfDb(entry.db as string),
      statements,
      maxResultRows: 0,
      context: { clockMs: entry.clock ?? 0, seed: entry.seed ?? '0' },
      ...(entry.foreignKeys === 'off' ? { foreignKeys: 'off' as const } : {}),
    };
  }

  private fileOfDb(db: string): string {
    let file = this.files.get(db);
    if (file === undefined) {
      file = this.fileOf(db);
      this.files.set(db, file);
    }
    return file;
  }

  private createDatabase(entry: JournalEntry): void {
    this.removeFiles(entry);
    this.engine.createDatabase(this.fileOfDb(entry.db as string), entry.seq);
  }

  /**
   * Entries apply in seq order, so the source holds exactly what it held when
   * the copy was taken live: every earlier entry, no later one (rebuild.ts
   * checks its position). Its committed state only: a session replayed on it
   * has a connection of its own, as live.
   */
  private copyDatabase(entry: JournalEntry): void {
    const source = this.fileOf(entry.from as string);
    if (!fs.existsSync(source))
      throw new ReplayError(entry, `its source ${entry.from} does not exist at this point of the journal`);
    this.engine.copyDatabase(source, this.fileOf(entry.db as string), entry.seq, entry.from as string);
  }

  private dropDatabase(entry: JournalEntry): void {
    this.removeFiles(entry);
  }

  private removeFiles(entry: JournalEntry): void {
    const file = this.fileOfDb(entry.db as string);
    this.engine.closeDatabase(file);
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
  }

  /** A batch that failed live was rolled back whole: it changed nothing. Reads change nothing either. */
  private exec(entry: JournalEntry): void {
    if (!entry.ok || entry.readonly === true) return;
    try {
      this.engine.execHeld(this.request(entry));
      this.engine.commitHeld(entry.seq);
    } catch (error) {
      throw new ReplayError(
        entry,
        `succeeded live but failed on replay: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private begin(entry: JournalEntry): void {
    if (this.session !== null) this.engine.endSession(false);
    this.engine.beginSession(this.fileOfDb(entry.db as string));
    this.session = { id: entry.session as string, db: entry.db as string };
  }

  /**
   * A request that failed inside a session undid its own statements, but not
   * always all of them (a RELEASE in it stays), so it is run again and must
   * fail again, the same way.
   */
  private execInSession(entry: JournalEntry): void {
    if (this.session?.id !== entry.session || entry.readonly === true) return;
    if (!entry.ok && UNREPEATABLE_CODES.has(entry.code ?? 0)) return;
    let failure: unknown;
    try {
      this.engine.execInSession(this.request(entry));
    } catch (error) {
      failure = error;
    }
    if (entry.ok && failure !== undefined)
      throw new ReplayError(
        entry,
        `succeeded live but failed on replay: ${failure instanceof Error ? failure.message : inspect(failure)}`,
      );
    if (!entry.ok && !(failure instanceof EngineError && failure.code === entry.code)) {
      throw new ReplayError(
        entry,
        `failed live with [SQ${entry.code}] but ${failure === undefined ? 'succeeded' : `failed with ${failure instanceof Error ? String(failure) : inspect(failure)}`} on replay`,
      );
    }
  }

  private endSession(entry: JournalEntry, commit: boolean): void {
    if (this.session?.id !== entry.session) return;
    this.session = null;
    this.engine.endSession(commit, commit ? entry.seq : undefined);
  }
}
