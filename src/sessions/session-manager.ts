/**
 * Cross-request transaction sessions. One session at a time for the whole server. A session holds
 * its database's write lock and an engine of its own from begin to commit,
 * rollback, expiry or loss of that engine.
 */
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock, type Timer } from '../clock';
import { EngineError } from '../errors';
import type { CallContext, EngineHost, EngineSession, ExecStatement, StatementResult } from '../engine/protocol';
import type { DatabaseRef } from '../services/databases/database-directory';
import type { Release, WriteLocks } from '../services/writes/write-locks';
import { acquireWriteLock } from '../services/writes/lock-errors';
import { newBatchContext } from '../engine/deterministic-functions';
import { batchEntry, eventEntry, type RollbackReason } from '../../journal/journal';
import { databaseLimitBytes, stampOf, type Principal, type TokenStamp } from '../access/principal';
import type { JournalStatement } from '../../journal/record';
import { sourcesOf } from '../services/writes/journaled-request';
import { isJournalUnavailable, journalUnavailable, type WritePath } from '../services/writes/write-path';

export interface SessionOptions {
  idleTimeoutMs: number;
  lockTimeoutMs: number;
  maxResultRows: number;
  maxResultBytes: number;
  /** -max-database-mb: the bound of a session whose token carries none of its own. */
  maxDatabaseMb?: number;
  /** The idle timer's clock. @default systemClock */
  clock?: Clock;
}

/** What responses that carry a session say about it. */
export interface SessionInfo {
  session: string;
  db: string;
  expires_unix: number;
}

interface ActiveSession {
  readonly id: string;
  readonly ref: DatabaseRef;
  readonly engine: EngineSession;
  readonly release: Release;
  /** Keeps the begin entry unsettled while the session is open: a commit may need every entry from it on. */
  settle: () => void;
  lastUsedMs: number;
  inFlight: number;
  /** The token that opened it, if any: only it may use the session, and its entries name it. */
  readonly owner: Principal | undefined;
  readonly by: TokenStamp;
  /** A commit is under way: no request may use the session meanwhile. */
  ending: boolean;
  /** Its token was revoked: rolled back as soon as no request of it runs. */
  revoked: boolean;
  timer: Timer | undefined;
}

/** Ids of sessions that expired, kept so that a client hears "expired" rather than "unknown". */
const REMEMBERED_EXPIRED = 64;

/** 16 lowercase hexadecimal characters from a cryptographic source. */
export function newSessionId(): string {
  return randomBytes(8).toString('hex');
}

export class SessionManager {
  private active: ActiveSession | null = null;
  private opening = false;
  private readonly expired: string[] = [];
  private readonly clock: Clock;

  constructor(
    private readonly engine: EngineHost,
    private readonly locks: WriteLocks,
    private readonly path: WritePath,
    private readonly options: SessionOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  async begin(ref: DatabaseRef, owner?: Principal): Promise<SessionInfo> {
    this.expireIfIdle();
    if (this.active !== null || this.opening) throw this.busyError(owner);
    this.opening = true;
    try {
      const release = await acquireWriteLock(this.locks, ref, 'session', this.options.lockTimeoutMs);
      const engine = await this.prepare(ref, release);
      const id = newSessionId();
      const settle = await this.path
        .appendHeld('session', eventEntry('begin', ref.name, id, stampOf(owner)))
        .catch(async (error: unknown) => {
          await engine.end(false).finally(release);
          throw error;
        });
      const session: ActiveSession = {
        id,
        ref,
        engine,
        release,
        settle,
        owner,
        by: stampOf(owner),
        lastUsedMs: this.clock.now(),
        inFlight: 0,
        ending: false,
        revoked: false,
        timer: undefined,
      };
      engine.onLost(() => this.lose(session));
      this.active = session;
      this.armTimer(session);
      return this.info(session);
    } finally {
      this.opening = false;
    }
  }

  /** The database is in line with the journal and the session's engine is open; the lock is released on failure. */
  private async prepare(ref: DatabaseRef, release: Release): Promise<EngineSession> {
    try {
      await this.path.ready(ref.name);
    } catch (error) {
      release();
      throw error;
    }
    return this.openEngine(ref, release);
  }

  private async openEngine(ref: DatabaseRef, release: Release): Promise<EngineSession> {
    try {
      return await this.engine.openSession(ref.file);
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Runs statements in the session's transaction; the session stays open even
   * when one fails. A request that writes (or failed: replay runs it again)
   * must have its entry durable, or the session's transaction would hold work
   * the journal lacks: if the journal cannot take it, the session is rolled
   * back. `jsonRows`: see ExecRequest. A request stopped while it runs (its
   * deadline, its client gone: `call`) ends the session with it.
   */
  async exec(
    id: string,
    db: DatabaseRef | undefined,
    statements: readonly ExecStatement[],
    readonly: boolean,
    options: { jsonRows?: boolean; sources?: readonly JournalStatement[]; call?: CallContext } = {},
  ): Promise<{ results: StatementResult[]; info: SessionInfo }> {
    const session = this.find(id, options.call?.principal);
    if (db !== undefined && db.file !== session.ref.file)
      throw new EngineError('SESSION_OTHER_DATABASE', { session: id, db: session.ref.name });
    session.inFlight++;
    const context = newBatchContext();
    const started = performance.now();
    const sources = options.sources ?? sourcesOf(statements);
    const record = async (outcome: { results?: StatementResult[]; error?: EngineError }): Promise<void> => {
      const entry = {
        ...batchEntry({
          db: session.ref.name,
          session: id,
          sources,
          readonly,
          context,
          ms: performance.now() - started,
          ...outcome,
        }),
        ...session.by,
      };
      if (readonly) return this.path.note('read', entry);
      await this.path
        .appendThenApply(session.ref.name, [{ event: 'write', entry }], {
          apply: async () => undefined,
          discard: async () => undefined,
        })
        .catch(async (error: unknown) => {
          if (!isJournalUnavailable(error)) throw error;
          await this.closeQuietly(session, 'aborted');
          throw journalUnavailable((error as Error).cause, `session ${id} was rolled back`);
        });
    };
    try {
      const results = await session.engine.exec(
        {
          file: session.ref.file,
          statements,
          maxResultRows: this.options.maxResultRows,
          maxResultBytes: this.options.maxResultBytes,
          context,
          jsonRows: options.jsonRows === true,
          // The session's owner writes it, whoever the bound is checked for: the same token throughout.
          maxDatabaseBytes: databaseLimitBytes(session.owner, this.options.maxDatabaseMb),
        },
        options.call,
      );
      await record({ results });
      // The idle time counts from now: the answer's expires_unix says so (it said the previous request's).
      session.lastUsedMs = this.clock.now();
      return { results, info: this.info(session) };
    } catch (error) {
      const sessionError = this.sessionError(error, session);
      if (sessionError instanceof EngineError && !isJournalUnavailable(sessionError))
        await record({ error: sessionError });
      throw sessionError;
    } finally {
      session.inFlight--;
      session.lastUsedMs = this.clock.now();
      if (this.active === session) this.armTimer(session);
      void this.endIfRevoked(session);
    }
  }

  /**
   * A revoked token's session ends at once (or when its running request
   * ends): nobody can use it any more, and until it ends it holds its
   * database's writes and the one session slot.
   */
  async endOwnedBy(tokenId: string): Promise<void> {
    const session = this.active;
    if (session === null || session.owner?.id !== tokenId) return;
    session.revoked = true;
    await this.endIfRevoked(session);
  }

  private async endIfRevoked(session: ActiveSession): Promise<void> {
    if (!session.revoked || session.inFlight > 0 || session.ending || this.active !== session) return;
    await this.closeQuietly(session, 'revoked');
  }

  /**
   * Commits or rolls back, and closes the session. A commit is journaled
   * before it happens; if the journal cannot take it, the session stays open
   * and the client may commit again. If the commit itself fails, its entry is
   * voided and the session is gone.
   */
  async end(id: string, commit: boolean, by?: Principal): Promise<DatabaseRef> {
    const session = this.find(id, by);
    session.timer?.cancel();
    session.ending = true;
    session.inFlight++;
    try {
      if (commit) await this.commit(session);
      else await this.rollback(session, 'client');
    } catch (error) {
      if (isJournalUnavailable(error) && this.active === session) {
        session.ending = false;
        this.armTimer(session);
        throw error;
      }
      this.close(session);
      throw error;
    } finally {
      session.inFlight--;
      session.lastUsedMs = this.clock.now();
    }
    this.close(session);
    return session.ref;
  }

  private async commit(session: ActiveSession): Promise<void> {
    await this.path.appendThenApply(
      session.ref.name,
      [{ event: 'session', entry: eventEntry('commit', session.ref.name, session.id, session.by) }],
      {
        apply: (seq) => session.engine.end(true, seq ?? undefined),
        discard: async () => undefined,
        tookEffect: async (seq) => (await this.engine.journalPosition(session.ref.file)).applied >= seq,
      },
    );
  }

  private async rollback(session: ActiveSession, reason: RollbackReason): Promise<void> {
    try {
      await session.engine.end(false);
    } finally {
      await this.path.note('session', eventEntry('rollback', session.ref.name, session.id, { reason, ...session.by }));
    }
  }

  /** The database a session is bound to, for routing and responses. */
  databaseOf(id: string): DatabaseRef {
    return this.find(id).ref;
  }

  /**
   * The open session of that id, for `by`. Another token's session is "no
   * such session": its id reveals nothing, not even that it exists.
   */
  private find(id: string, by?: Principal): ActiveSession {
    this.expireIfIdle();
    const session = this.active;
    const owned = session?.owner === undefined || session.owner.id === by?.id;
    if (session !== null && session.id === id && !session.ending && owned) return session;
    if (session !== null && session.id === id && !owned) throw new EngineError('NO_SUCH_SESSION', { session: id });
    if (this.expired.includes(id))
      throw new EngineError('SESSION_EXPIRED', { session: id, seconds: Math.round(this.options.idleTimeoutMs / 1000) });
    throw new EngineError('NO_SUCH_SESSION', { session: id });
  }

  private info(session: ActiveSession): SessionInfo {
    return {
      session: session.id,
      db: session.ref.name,
      expires_unix: Math.floor((session.lastUsedMs + this.options.idleTimeoutMs) / 1000),
    };
  }

  private secondsLeft(session: ActiveSession): number {
    return Math.max(0, Math.ceil((session.lastUsedMs + this.options.idleTimeoutMs - this.clock.now()) / 1000));
  }

  /** Another token's session is not named: that a session is open can be told, not on which database. */
  private busyError(asking?: Principal): EngineError {
    const session = this.active;
    if (session === null) return new EngineError('SESSION_ACTIVE', { db: 'a database', seconds: 1 }, { retryAfter: 1 });
    const seconds = this.secondsLeft(session);
    const db = session.owner === undefined || session.owner.id === asking?.id ? session.ref.name : 'a database';
    return new EngineError('SESSION_ACTIVE', { db, seconds }, { retryAfter: Math.max(1, seconds) });
  }

  /** A statement that stopped the session's engine ended the session too; the error says so. */
  private sessionError(error: unknown, session: ActiveSession): unknown {
    if (!(error instanceof EngineError)) return error;
    const statement = error.statement === undefined ? {} : { statement: error.statement };
    if (error.errorName === 'QUERY_TIMEOUT') return new EngineError('SESSION_QUERY_TIMEOUT', error.params, statement);
    if (error.errorName === 'REQUEST_TIMEOUT')
      return new EngineError('SESSION_REQUEST_TIMEOUT', error.params, statement);
    if (error.errorName === 'ENGINE_CRASHED') return new EngineError('SESSION_ENGINE_CRASHED', {}, statement);
    if (error.errorName === 'SESSION_ABORTED' || error.errorName === 'SESSION_DATABASE_TOO_LARGE')
      void this.closeQuietly(session, 'aborted');
    return error;
  }

  /** Enforced by a timer, so that an abandoned session never holds its database longer than the timeout. */
  private armTimer(session: ActiveSession): void {
    session.timer?.cancel();
    session.timer = this.clock.after(this.options.idleTimeoutMs + 10, () => this.expireIfIdle());
  }

  /** Lazily on every request, and by the timer: a session idle past the timeout is rolled back, silently. */
  private expireIfIdle(): void {
    const session = this.active;
    if (session === null || session.inFlight > 0) return;
    if (this.clock.now() - session.lastUsedMs <= this.options.idleTimeoutMs) return;
    this.expired.push(session.id);
    if (this.expired.length > REMEMBERED_EXPIRED) this.expired.shift();
    void this.closeQuietly(session, 'expired');
  }

  private async closeQuietly(session: ActiveSession, reason: RollbackReason): Promise<void> {
    if (this.active === session) this.active = null;
    await this.rollback(session, reason).catch(() => undefined);
    // The lock only after the rollback: a waiting writer would otherwise meet the session's SQLite lock (SQLITE_BUSY).
    this.close(session);
  }

  /** The session's engine is gone (killed at the query timeout, or crashed): SQLite rolled the transaction back. */
  private lose(session: ActiveSession): void {
    if (this.active !== session || session.ending) return;
    this.close(session);
    void this.path.note(
      'session',
      eventEntry('rollback', session.ref.name, session.id, { reason: 'engine-lost', ...session.by }),
    );
  }

  /** Forgets the session and frees its database; its engine is gone or being rolled back. */
  private close(session: ActiveSession): void {
    if (this.active === session) this.active = null;
    session.timer?.cancel();
    session.release();
    session.settle();
  }

  /** Rolls back an open session at shutdown. */
  async shutdown(): Promise<void> {
    const session = this.active;
    if (session !== null) await this.closeQuietly(session, 'shutdown');
  }
}
