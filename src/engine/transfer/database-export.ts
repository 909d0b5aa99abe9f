/**
 * GET /dbs/{db}/export, the engine's half: the database written to a file in
 * one read transaction (one snapshot, whatever writes come meanwhile), which
 * the server then streams to the client and removes. A file rather than an
 * answer over the process channel, so that a big database is never held
 * whole in memory on either side.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { EngineError } from '../../errors';
import { csvRecord, type CsvField } from './csv-records';
import { dumpStatements } from './sql-dump';
import { sqlLiteral, type StoredValue } from './sql-literal';
import { readTableSchema } from '../schema/schema';
import { quoteIdentifier } from '../types';

export type ExportFormat = 'sql' | 'sqlite' | 'csv';

export interface ExportRequest {
  readonly format: ExportFormat;
  /** csv: the table. */
  readonly table: string | null;
  /** Where the copy goes (a new file). */
  readonly out: string;
}

/** Writes text to a file a piece at a time. */
class FileWriter {
  private readonly fd: number;
  constructor(file: string) {
    this.fd = fs.openSync(file, 'wx');
  }
  write(text: string): void {
    fs.writeSync(this.fd, text);
  }
  close(): void {
    fs.closeSync(this.fd);
  }
}

const SQL_HEADER =
  '-- sqlscribe export: load it with POST /dbs/{db}/import (Content-Type: application/sql) or sqlite3\n';

/**
 * What a dump of a database whose rows break its own foreign keys (an
 * imported file, as SQLite opened it) starts with, as sqlite3's .dump does:
 * so that it loads back as it is, into sqlscribe's import and into sqlite3.
 * A database whose keys all hold needs none, and its dump loads with them enforced.
 */
const KEYS_OFF = 'PRAGMA foreign_keys=OFF;\n';

function breaksItsKeys(db: Database.Database): boolean {
  return db.prepare('PRAGMA foreign_key_check').raw(true).get() !== undefined;
}

function writeSql(db: Database.Database, out: string): void {
  const file = new FileWriter(out);
  try {
    file.write(SQL_HEADER);
    if (breaksItsKeys(db)) file.write(KEYS_OFF);
    for (const statement of dumpStatements(db)) file.write(`${statement};\n`);
  } finally {
    file.close();
  }
}

/**
 * A new database file built from the dump: only the user's objects, none of
 * the service's. A copy does not enforce the file's rules on the file's own
 * data: a database served as it came (-db, an upload) may hold rows whose keys
 * point nowhere, or that a CHECK added later refuses, and SQLite opens and
 * serves it all the same, so the copy takes them as they are
 * (better-sqlite3 turns foreign keys on by default).
 */
function writeSqlite(db: Database.Database, out: string): void {
  const copy = new Database(out);
  try {
    copy.pragma('foreign_keys = OFF');
    copy.pragma('ignore_check_constraints = ON');
    copy.exec('BEGIN');
    for (const statement of dumpStatements(db)) copy.exec(statement);
    copy.exec('COMMIT');
  } finally {
    copy.close();
  }
}

/** A value as a CSV field; ±Infinity as 9e999 and -9e999, which the CSV import (and SQLite's REAL columns) read back as the same. */
function csvValue(value: StoredValue): CsvField {
  if (value === null) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return sqlLiteral(value);
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  if (typeof value === 'string') return value;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
}

function writeCsv(db: Database.Database, table: string, out: string): void {
  const schema = readTableSchema(db, table);
  if (schema === undefined) throw new EngineError('TABLE_NOT_FOUND', { table });
  const file = new FileWriter(out);
  try {
    const names = schema.columns.map((column) => column.name);
    file.write(csvRecord(names));
    const read = db
      .prepare(`SELECT ${names.map(quoteIdentifier).join(', ')} FROM ${quoteIdentifier(schema.name)}`)
      .raw(true)
      .safeIntegers(true);
    for (const row of read.iterate() as IterableIterator<StoredValue[]>) file.write(csvRecord(row.map(csvValue)));
  } finally {
    file.close();
  }
}

/** Writes the export; the caller holds a read transaction on `db`. */
export function writeExport(db: Database.Database, request: ExportRequest): void {
  try {
    if (request.format === 'sql') return writeSql(db, request.out);
    if (request.format === 'sqlite') return writeSqlite(db, request.out);
    return writeCsv(db, request.table ?? '', request.out);
  } catch (error) {
    fs.rmSync(request.out, { force: true });
    throw error;
  }
}
