/**
 * Keeps copies of databases (POST /dbs with `from`, resets) and snapshot
 * rounds apart. A round copies database files one after the other while
 * writes go on; a template copied late into a round could then be newer than
 * a copy of it that the round took earlier (or missed), and a restore from
 * that round would have no way to make the copy as it was. With no copy made
 * while a round runs, every copy entry after the round's base is either in
 * its target's snapshot already or was journaled after the round ended, when
 * its template's snapshot is older than it and the journal brings the
 * template up to it first.
 *
 * Many copies may run at once; a round waits for those under way, and copies
 * that come while it waits or runs wait for it.
 */
export class CopyGate {
  private copies = 0;
  private round: Promise<void> | null = null;
  private idle: (() => void) | null = null;

  /** Runs a copy (or a reset) once no round runs. */
  async copying<T>(work: () => Promise<T>): Promise<T> {
    while (this.round !== null) await this.round;
    this.copies++;
    try {
      return await work();
    } finally {
      this.copies--;
      if (this.copies === 0) this.idle?.();
    }
  }

  /** Runs a snapshot round once the copies under way are done; copies wait meanwhile. */
  async snapshotting<T>(work: () => Promise<T>): Promise<T> {
    while (this.round !== null) await this.round;
    let done!: () => void;
    this.round = new Promise<void>((resolve) => (done = resolve));
    try {
      if (this.copies > 0) await new Promise<void>((resolve) => (this.idle = resolve));
      this.idle = null;
      return await work();
    } finally {
      this.round = null;
      done();
    }
  }
}
