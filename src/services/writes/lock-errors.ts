/** Taking a database's write lock within -lock-timeout, and the error a client gets when that fails. */
import { EngineError } from '../../errors';
import type { DatabaseRef } from '../databases/database-directory';
import { LockTimeoutError, type Holder, type Release, type WriteLocks } from './write-locks';

/** What a client gets when -lock-timeout passed while the lock was held by `heldBy`. */
export function lockTimeoutError(ref: DatabaseRef, heldBy: Holder | undefined, timeoutMs: number): EngineError {
  if (heldBy === 'session') return new EngineError('DATABASE_LOCKED', { db: ref.name }, { retryAfter: 1 });
  return new EngineError('WRITE_LOCK_TIMEOUT', { db: ref.name, ms: timeoutMs }, { retryAfter: 1 });
}

export async function acquireWriteLock(
  locks: WriteLocks,
  ref: DatabaseRef,
  holder: Holder,
  timeoutMs: number,
): Promise<Release> {
  try {
    return await locks.acquire(ref.file, holder, timeoutMs);
  } catch (error) {
    if (!(error instanceof LockTimeoutError)) throw error;
    throw lockTimeoutError(ref, error.heldBy, timeoutMs);
  }
}

export async function withWriteLock<T>(
  locks: WriteLocks,
  ref: DatabaseRef,
  timeoutMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const release = await acquireWriteLock(locks, ref, 'batch', timeoutMs);
  try {
    return await work();
  } finally {
    release();
  }
}
