/** Taking a database's write lock within -lock-timeout, and the error a client gets when that fails. */
import { EngineError } from '../errors';
import type { DatabaseRef } from './database-directory';
import { LockTimeoutError, type Holder, type Release, type WriteLocks } from './write-locks';

export async function acquireWriteLock(locks: WriteLocks, ref: DatabaseRef, holder: Holder, timeoutMs: number): Promise<Release> {
  try {
    return await locks.acquire(ref.file, holder, timeoutMs);
  } catch (error) {
    if (!(error instanceof LockTimeoutError)) throw error;
    if (error.heldBy === 'session') throw new EngineError('DATABASE_LOCKED', { db: ref.name }, { retryAfter: 1 });
    throw new EngineError('WRITE_LOCK_TIMEOUT', { db: ref.name, ms: timeoutMs }, { retryAfter: 1 });
  }
}

export async function withWriteLock<T>(locks: WriteLocks, ref: DatabaseRef, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const release = await acquireWriteLock(locks, ref, 'batch', timeoutMs);
  try {
    return await work();
  } finally {
    release();
  }
}
