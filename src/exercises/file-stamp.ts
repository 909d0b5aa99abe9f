/**
 * A cheap stamp of a database's contents: its file and its write-ahead log,
 * by inode, size and modification time in nanoseconds. A commit grows or
 * rewrites the log, a checkpoint or a reset rewrites the file, a drop and
 * create gives another inode: each changes the stamp. Cached results are keyed
 * on it, without an engine call per request to ask the database its position
 * (a journal position would not do without a journal either).
 */
import fs from 'node:fs';

function partOf(file: string): string {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  } catch {
    return '-';
  }
}

/** '-' for a database that does not exist. */
export function databaseStamp(file: string): string {
  const main = partOf(file);
  return main === '-' ? '-' : `${main}|${partOf(`${file}-wal`)}`;
}
