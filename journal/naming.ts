/**
 * Journal file names. The active journal is the path `-log-file` names; rotated
 * files sit beside it as `<stem>.<yyyymmdd-hhmmss>.<index><ext>[.gz]`, e.g.
 * `statements.20261121-054312.1.jsonl.gz` beside `statements.jsonl`.
 *
 * The names carry the rotation time for people; readers order entries by seq,
 * never by name (the index is not zero-padded, and clocks can step back).
 */
import fs from 'node:fs/promises';
import path from 'node:path';

const GZIP_SUFFIX = '.gz';

/** Splits `statements.jsonl` into `statements` and `.jsonl`. */
function splitName(base: string): { stem: string; ext: string } {
  const ext = path.extname(base);
  return { stem: base.slice(0, base.length - ext.length), ext };
}

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** `20261121-054312` in UTC, so that names do not depend on the server's time zone. */
function stamp(time: Date): string {
  const date = `${time.getUTCFullYear()}${twoDigits(time.getUTCMonth() + 1)}${twoDigits(time.getUTCDate())}`;
  return `${date}-${twoDigits(time.getUTCHours())}${twoDigits(time.getUTCMinutes())}${twoDigits(time.getUTCSeconds())}`;
}

/**
 * The name of a rotated file: `time` is the rotation's, and `index` counts from
 * 1 until a name is free. A directory in `activeBase` is kept. `compressed`
 * gives the name of the file once gzipped.
 */
export function rotatedName(activeBase: string, time: Date, index: number, compressed = false): string {
  const { stem, ext } = splitName(path.basename(activeBase));
  const name = `${stem}.${stamp(time)}.${index}${ext}${compressed ? GZIP_SUFFIX : ''}`;
  return path.join(path.dirname(activeBase), name);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function rotatedPattern(activeFile: string): RegExp {
  const { stem, ext } = splitName(path.basename(activeFile));
  return new RegExp(`^${escapeRegExp(stem)}\\.\\d{8}-\\d{6}\\.\\d+${escapeRegExp(ext)}(?:\\.gz)?$`);
}

/**
 * Whether `candidate` (a bare name, or a path in the active file's directory)
 * is the active journal or one of its rotated siblings.
 */
export function isJournalFile(activeFile: string, candidate: string): boolean {
  const candidateDir = path.dirname(candidate);
  if (candidateDir !== '.' && path.resolve(candidateDir) !== path.resolve(path.dirname(activeFile))) return false;
  const name = path.basename(candidate);
  return name === path.basename(activeFile) || rotatedPattern(activeFile).test(name);
}

/**
 * The active file and its rotated siblings that exist, as paths beside `activeFile`, in no promised order.
 * Files the writer is still preparing (`<active>.next`, `<rotated>.gz.tmp`) match neither name, so are never listed.
 */
export async function journalFiles(activeFile: string): Promise<string[]> {
  const dir = path.dirname(activeFile);
  let dirents;
  try {
    dirents = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return dirents
    .filter((d) => (d.isFile() || d.isSymbolicLink()) && isJournalFile(activeFile, d.name))
    .map((d) => path.join(dir, d.name));
}
