/**
 * One writer per database at a time, queued in arrival order. SQLite would
 * answer a second writer with SQLITE_BUSY; the service serializes writers
 * itself so that no client ever sees that (decisions §4).
 */

export type Release = () => void;

export class WriteLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves when the caller holds the lock on `key`; the caller must call the release it gets. */
  acquire(key: string): Promise<Release> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.tails.set(key, tail);
    return previous.then(() => () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
  }

  /** Runs `work` holding the lock on `key`. */
  async withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
