/** The versions a journal was written with, recorded in its header: replay warns on a mismatch. */
import Database from 'better-sqlite3';

export function engineVersions(): { betterSqlite3: string; sqlite: string; node: string; tz: string } {
  const db = new Database(':memory:');
  const sqlite = db.prepare('SELECT sqlite_version()').pluck().get() as string;
  db.close();
  return {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the package's own package.json, not a module
    betterSqlite3: (require('better-sqlite3/package.json') as { version: string }).version,
    sqlite,
    node: process.version,
    tz: process.env.TZ ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}
