/** Opening the statement journal with what its header must record (decisions §6). */
import Database from 'better-sqlite3';
import { Journal } from '../journal/journal';
import type { Config } from './options';
import { version } from './version';

/** The versions a journal was written with: replay warns on a mismatch. */
export function engineVersions(): { betterSqlite3: string; sqlite: string; node: string; tz: string } {
  const db = new Database(':memory:');
  const sqlite = db.prepare('SELECT sqlite_version()').pluck().get() as string;
  db.close();
  return {
    betterSqlite3: (require('better-sqlite3/package.json') as { version: string }).version,
    sqlite,
    node: process.version,
    tz: process.env.TZ ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}

export function openJournal(config: Config): Promise<Journal> {
  if (config.logFile === null || config.logLevel === 'none') return Promise.resolve(Journal.disabled());
  return Journal.open(config.logLevel, {
    file: config.logFile,
    maxSize: config.logMaxSize,
    fsync: config.logFsync,
    compress: config.logCompress,
    header: { service: 'sqlscribe', version, level: config.logLevel, ...engineVersions() },
    warn: (message) => process.stderr.write(`sqlscribe: ${message}\n`),
  });
}
