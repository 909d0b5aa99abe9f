/**
 * The few file-system calls the journal writer makes, behind an interface so
 * that tests can make any one of them fail (a full disk, an I/O error, a short
 * write) without filling a real disk. The default is node's fs.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';

/** An open file: node's FileHandle has exactly these methods. */
export interface JournalFileHandle {
  /** Writes at `position`; may write fewer bytes than asked (the caller loops). */
  write(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
}

export interface JournalFileSystem {
  /** `r+` opens an existing file for writing; `w` creates or empties one. */
  open(file: string, flags: 'r+' | 'w'): Promise<JournalFileHandle>;
  /** The size of a file, or undefined when it does not exist. */
  size(file: string): Promise<number | undefined>;
  rename(from: string, to: string): Promise<void>;
  unlink(file: string): Promise<void>;
  /** Names (not paths) in a directory. */
  readdir(directory: string): Promise<string[]>;
  mkdir(directory: string): Promise<void>;
  readFile(file: string): Promise<Buffer>;
  /** Makes renames, creations and removals in the directory durable. */
  syncDirectory(directory: string): Promise<void>;
}

async function size(file: string): Promise<number | undefined> {
  try {
    return (await fsp.stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fsp.open(directory, fs.constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export const nodeFileSystem: JournalFileSystem = {
  open: (file, flags) => fsp.open(file, flags),
  size,
  rename: (from, to) => fsp.rename(from, to),
  unlink: (file) => fsp.unlink(file),
  readdir: (directory) => fsp.readdir(directory),
  mkdir: async (directory) => {
    await fsp.mkdir(directory, { recursive: true });
  },
  readFile: (file) => fsp.readFile(file),
  syncDirectory,
};

/** Writes all of `buffer` at `position`, looping over short writes; a write that makes no progress is an error. */
export async function writeFully(handle: JournalFileHandle, buffer: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, done, buffer.length - done, position + done);
    if (bytesWritten <= 0) throw Object.assign(new Error('the journal write made no progress'), { code: 'EIO' });
    done += bytesWritten;
  }
}

/** Closes a handle whose state no longer matters, keeping the error that led here rather than a close error. */
export async function closeQuietly(handle: JournalFileHandle | null): Promise<void> {
  if (handle === null) return;
  try {
    await handle.close();
  } catch {
    // The handle is dropped either way; the caller already has the error worth reporting.
  }
}
