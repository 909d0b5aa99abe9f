/**
 * One writer per database at a time, queued in arrival order. SQLite would
 * answer a second writer with SQLITE_BUSY; the service serializes writers
 * itself so that no client ever sees that. A session holds its
 * database's lock from begin to commit or rollback.
 */

export type Release = () => void;

/** Who holds a lock: an auto-commit batch, or a session (which can hold it for minutes). */
export type Holder = 'batch' | 'session';

interface Waiter {
  holder: Holder;
  grant(release: Release): void;
}

interface LockState {
  holder: Holder;
  waiters: Waiter[];
}

export class LockTimeoutError extends Error {
  constructor(readonly heldBy: Holder) {
    super(`lock held by a ${heldBy}`);
  }
}

export class WriteLocks {
  private readonly locks = new Map<string, LockState>();

  /** Who holds the lock on `key` now, if anyone. */
  holderOf(key: string): Holder | undefined {
    return this.locks.get(key)?.holder;
  }

  /**
   * Resolves with a release function once the caller holds the lock on `key`;
   * with `timeoutMs`, rejects with LockTimeoutError if it is not held by then.
   */
  acquire(key: string, holder: Holder, timeoutMs?: number): Promise<Release> {
    const state = this.locks.get(key);
    if (state === undefined) {
      this.locks.set(key, { holder, waiters: [] });
      return Promise.resolve(this.releaser(key));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { holder, grant: resolve };
      state.waiters.push(waiter);
      if (timeoutMs === undefined) return;
      const timer = setTimeout(() => {
        const at = state.waiters.indexOf(waiter);
        if (at < 0) return;
        state.waiters.splice(at, 1);
        reject(new LockTimeoutError(state.holder));
      }, timeoutMs);
      waiter.grant = (release) => {
        clearTimeout(timer);
        resolve(release);
      };
    });
  }

  private releaser(key: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const state = this.locks.get(key);
      const next = state?.waiters.shift();
      if (state === undefined || next === undefined) {
        this.locks.delete(key);
        return;
      }
      state.holder = next.holder;
      next.grant(this.releaser(key));
    };
  }
}
