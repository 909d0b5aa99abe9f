/**
 * -out: delivered entries are appended to a JSONL file, each line synced
 * before the next entry is taken. The file is its own cursor: a line is
 * either in it (delivered) or not, and a restart resumes after its last
 * whole line, so each entry is in the file exactly once however often the
 * follower is killed. A line cut by a crash is removed on start.
 */
import fs from 'node:fs';
import type { Deliver } from './deliver';
import { entryJson } from './format';

export class OutFileError extends Error {
  override name = 'OutFileError';
}

/** The end of the file that is read to find its last line: far longer than any entry. */
const TAIL_BYTES = 4 * 1024 * 1024;

/**
 * The seq of the last whole line of `file`, after cutting a torn last line
 * away; undefined when the file holds no whole line.
 */
export function lastDeliveredSeq(file: string): number | undefined {
  if (!fs.existsSync(file)) return undefined;
  const fd = fs.openSync(file, 'r+');
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    fs.readSync(fd, buffer, 0, buffer.length, start);
    const end = buffer.lastIndexOf(0x0a);
    if (start + end + 1 < size) {
      fs.ftruncateSync(fd, start + end + 1);
      fs.fdatasyncSync(fd);
    }
    if (end < 0) return undefined;
    const previous = buffer.lastIndexOf(0x0a, end - 1);
    const line = buffer.subarray(previous + 1, end).toString('utf8');
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq))
      throw new OutFileError(`${file}: its last line has no seq`);
    return seq;
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new OutFileError(`${file}: its last line is not an entry (${error.message})`);
    throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Appends the entry's JSON line and syncs it: once this resolves, the entry is delivered. */
export function outFileSink(file: string): Deliver {
  let fd: number | undefined;
  return async (entry) => {
    fd ??= fs.openSync(file, 'a');
    const line = Buffer.from(`${entryJson(entry)}\n`, 'utf8');
    for (let at = 0; at < line.length;) at += fs.writeSync(fd, line, at, line.length - at);
    fs.fdatasyncSync(fd);
  };
}
