/**
 * Where databases live: names, files and the data directory. Every path that
 * reaches the file system is built here, from a validated name, so nothing a
 * client sends can point outside the data directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../../errors';
import type { Config } from '../../config/options';
import { isClientName, normalizeDatabaseName } from '../../database-names';

export interface DatabaseRef {
  /** The name clients use, e.g. `school.db`. */
  readonly name: string;
  readonly file: string;
}

export class DatabaseDirectory {
  /**
   * Files seen to be databases: a request for one of them costs no system
   * call. Only DROP DATABASE (remove) takes a name out; a file deleted by
   * hand while the server runs is still served from its open handles until
   * a restart, as it would be anyway.
   */
  private readonly known = new Set<string>();
  /** The refs of known databases by name, so that resolving one builds no path either. */
  private readonly refs = new Map<string, DatabaseRef>();

  constructor(private readonly config: Config) {}

  get single(): boolean {
    return this.config.mode === 'single';
  }

  /** The database a request acts on: the single one, or the named one in multi-DB mode. */
  resolve(db: unknown): DatabaseRef {
    if (this.config.dbFile !== null) return this.resolveSingle(db, this.config.dbFile);
    if (db === undefined || db === null || db === '') throw new EngineError('DATABASE_REQUIRED');
    const name = normalizeDatabaseName(db);
    const known = this.refs.get(name);
    if (known !== undefined) return known;
    const ref = this.refOf(name);
    if (!this.exists(ref)) throw new EngineError('NO_SUCH_DATABASE', { db: name });
    this.refs.set(name, ref);
    return ref;
  }

  private resolveSingle(db: unknown, file: string): DatabaseRef {
    const name = path.basename(file);
    const asked =
      db === undefined || db === null ? '' : typeof db === 'string' ? db.trim().toLowerCase() : JSON.stringify(db);
    // A client written for multi-DB mode may still name the database: accept its own name.
    if (asked !== '' && asked !== name.toLowerCase() && `${asked}.db` !== name.toLowerCase()) {
      throw new EngineError('NO_SUCH_DATABASE', { db: typeof db === 'string' ? db : asked });
    }
    return { name, file };
  }

  /** A database of the data directory by its normalized name; it may not exist yet. */
  /** Recreated when missing, so that a data directory deleted by hand does not break creation. */
  ensureDirectory(): void {
    fs.mkdirSync(this.config.dir, { recursive: true });
  }

  refOf(name: string): DatabaseRef {
    return { name, file: path.join(this.config.dir, name) };
  }

  /** Anything at all at the database's path (a planted symlink too): the name is taken. */
  occupied(ref: DatabaseRef): boolean {
    try {
      fs.lstatSync(ref.file);
      return true;
    } catch {
      return false;
    }
  }

  /** Only regular files count: a symlink planted in the directory is not a database. */
  exists(ref: DatabaseRef): boolean {
    if (this.known.has(ref.file)) return true;
    try {
      if (!fs.lstatSync(ref.file).isFile()) return false;
    } catch {
      return false;
    }
    this.known.add(ref.file);
    return true;
  }

  list(): string[] {
    if (this.config.dbFile !== null) return [path.basename(this.config.dbFile)];
    if (!fs.existsSync(this.config.dir)) return [];
    return fs
      .readdirSync(this.config.dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.db') && isClientName(entry.name.slice(0, -3)))
      .map((entry) => entry.name)
      .sort();
  }

  /**
   * Deletes the file and SQLite's companions; the caller closes open handles
   * first. The database goes in one step (a rename out of its name), so a
   * failure part-way never leaves it half there; the companions go before the
   * name can be used again, as a new database must never meet an old WAL.
   */
  remove(ref: DatabaseRef): void {
    this.known.delete(ref.file);
    this.refs.delete(ref.name);
    const doomed = `${ref.file}.dropped`;
    fs.renameSync(ref.file, doomed);
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(ref.file + suffix, { force: true });
    fs.rmSync(doomed, { force: true });
  }
}
