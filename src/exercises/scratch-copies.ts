/**
 * The copies of templates that answers run on: never the template itself,
 * never a student's database. A scratch directory of the server's own holds
 * them, and is emptied at start (a copy outlives no process).
 *
 * - One base copy per template and version (its file stamp): an answer that
 *   only reads runs on it, shared by every check of that version (the same
 *   classifier that lets /exec run a batch without the write lock decides
 *   that it reads). It is replaced when the template changes, and removed once
 *   no check uses it.
 * - An answer that writes gets a copy of its own, a file copy of the base,
 *   removed after the check (in the background: every engine process closes
 *   its handle first, which waits for the call each one is running).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EngineHost } from '../engine/protocol';
import type { DatabaseRef } from '../services/databases/database-directory';
import { databaseStamp } from './file-stamp';

interface Base {
  readonly file: string;
  readonly stamp: string;
  users: number;
  /** Replaced by a newer version: removed when its last user is done. */
  retired: boolean;
  /** The template was not written during the copy: the copy is the template as of `stamp`. */
  readonly stable: boolean;
}

/** A copy lent to one check; `release` gives it back. */
export interface Lease {
  readonly file: string;
  /** The template's stamp the copy was made at: cached results are keyed on it. */
  readonly stamp: string;
  /** Whether the copy is the template as of `stamp` (false: the template changed during the copy; cache nothing). */
  readonly stable: boolean;
  release(): void;
}

export class ScratchCopies {
  private readonly bases = new Map<string, Base>();
  private readonly making = new Map<string, Promise<Base>>();
  private counter = 0;

  constructor(
    private readonly dir: string,
    private readonly engine: EngineHost,
    private readonly log: (message: string) => void,
  ) {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  /** The shared copy of the template's current version: for answers that only read. */
  async readCopy(template: DatabaseRef): Promise<Lease> {
    const base = await this.baseOf(template);
    base.users++;
    return { file: base.file, stamp: base.stamp, stable: base.stable, release: () => this.done(base) };
  }

  /** A copy of the template of one's own, removed once released: for answers that write. */
  async writeCopy(template: DatabaseRef): Promise<Lease> {
    const base = await this.baseOf(template);
    const file = path.join(this.dir, `${path.basename(template.name, '.db')}-w${++this.counter}.db`);
    base.users++;
    try {
      await fs.promises.copyFile(base.file, file);
    } catch (error) {
      // A copy cut short (a full disk) is no one's: it goes now, or it would stay until the server restarts.
      this.remove(file);
      throw error;
    } finally {
      this.done(base);
    }
    return { file, stamp: base.stamp, stable: base.stable, release: () => this.remove(file) };
  }

  private async baseOf(template: DatabaseRef): Promise<Base> {
    const stamp = databaseStamp(template.file);
    const current = this.bases.get(template.name);
    if (current !== undefined && current.stamp === stamp) return current;
    const key = `${template.name}\0${stamp}`;
    let made = this.making.get(key);
    if (made === undefined) {
      made = this.makeBase(template, stamp).finally(() => this.making.delete(key));
      this.making.set(key, made);
    }
    return made;
  }

  private async makeBase(template: DatabaseRef, stamp: string): Promise<Base> {
    fs.mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, `${path.basename(template.name, '.db')}-b${++this.counter}.db`);
    try {
      await this.engine.copyDatabase(template.file, file, undefined, template.name);
    } catch (error) {
      // The engine may have landed the copy before it failed (stopped at its deadline, its process lost): no base holds it.
      this.remove(file);
      throw error;
    }
    // Written meanwhile: the copy may be newer than the stamp says. Use it once, keep nothing of it.
    const stable = databaseStamp(template.file) === stamp;
    const base: Base = { file, stamp, users: 0, retired: !stable, stable };
    if (stable) {
      const old = this.bases.get(template.name);
      this.bases.set(template.name, base);
      if (old !== undefined) {
        old.retired = true;
        if (old.users === 0) this.remove(old.file);
      }
    }
    return base;
  }

  private done(base: Base): void {
    base.users--;
    if (base.retired && base.users === 0) this.remove(base.file);
  }

  private remove(file: string): void {
    void this.engine
      .closeDatabase(file)
      .then(() => {
        for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
      })
      .catch((error: unknown) =>
        this.log(`removing the scratch copy ${file} failed: ${String((error as Error)?.message ?? error)}`),
      );
  }
}
