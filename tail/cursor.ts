/**
 * The cursor file: the last seq a follower handled (delivered, or passed over
 * by its filters). It is replaced atomically, so after any crash it holds
 * either the old seq or the new one, never a torn mix.
 */
import fs from 'node:fs';
import path from 'node:path';

export class CursorError extends Error {
  override name = 'CursorError';
}

/** The seq the file holds; undefined when there is no cursor file yet. */
export function readCursor(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CursorError(`cursor ${file}: cannot be read (${(err as Error).message})`);
  }
  return parseCursor(file, text);
}

export function parseCursor(file: string, text: string): number {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const seq = (value as { seq?: unknown } | undefined)?.seq;
  if (typeof value !== 'object' || value === null || !Number.isSafeInteger(seq) || (seq as number) < 0) {
    throw new CursorError(`cursor ${file}: expected {"seq": <n>}, found ${JSON.stringify(text.slice(0, 80))}`);
  }
  return seq as number;
}

function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes the seq to a temporary file, syncs it, renames it over the cursor and
 * syncs the directory: the rename is the moment the new seq counts, and it
 * survives a power cut once this returns.
 */
export function writeCursor(file: string, seq: number): void {
  const temp = `${file}.tmp`;
  const fd = fs.openSync(temp, 'w');
  try {
    fs.writeSync(fd, `${JSON.stringify({ seq })}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  syncDirectory(path.dirname(file));
}
