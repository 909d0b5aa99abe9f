/**
 * Crash-safe replacement of the active journal file. The new file is fully
 * written and synced under `<active>.next` before any rename, so at every
 * instant the directory holds either the old active file or a complete new
 * one, and a crash leaves a state `settleInterruptedRotation` can finish.
 */
import path from 'node:path';
import { closeQuietly, writeFully, type JournalFileSystem } from './file-system';
import { rotatedName } from './naming';

/** Where the next active file is prepared. `journalFiles` never lists it. */
export function nextName(activeFile: string): string {
  return `${activeFile}.next`;
}

/**
 * At open, before the active file is read: a crash between the two renames
 * left no active file but a complete `.next` (it is renamed only after it was
 * synced), so the rename is finished; a `.next` beside an active file was never
 * installed and is removed. Returns what was done, for a warning.
 */
export async function settleInterruptedRotation(
  fs: JournalFileSystem,
  activeFile: string,
): Promise<string | undefined> {
  const next = nextName(activeFile);
  if ((await fs.size(next)) === undefined) return undefined;
  if ((await fs.size(activeFile)) === undefined) {
    await fs.rename(next, activeFile);
    await fs.syncDirectory(path.dirname(activeFile));
    return `journal ${activeFile}: finished a rotation a crash interrupted (${path.basename(next)} became the active file)`;
  }
  await fs.unlink(next);
  return `journal ${activeFile}: removed ${path.basename(next)}, left by a rotation a crash interrupted`;
}

/** A rotated name not yet taken, plain or gzipped: the index counts up within the same second. */
async function freeRotatedName(fs: JournalFileSystem, activeFile: string, time: Date): Promise<string> {
  for (let index = 1; ; index++) {
    const candidate = rotatedName(activeFile, time, index);
    if ((await fs.size(candidate)) === undefined && (await fs.size(`${candidate}.gz`)) === undefined) return candidate;
  }
}

async function writeSynced(fs: JournalFileSystem, file: string, text: string): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    await writeFully(handle, Buffer.from(text, 'utf8'), 0);
    await handle.datasync();
  } catch (err) {
    await closeQuietly(handle);
    throw err;
  }
  await handle.close();
}

/**
 * Replaces the active file by one holding only `header`, in one rename over
 * it (nothing is rotated: the old file holds no entry). The new file is
 * written and synced as `.next` first, so a crash leaves the old file, or
 * the new one; a `.next` left beside the old one is removed at open.
 * Returns the new file's size.
 */
export async function replaceActiveFile(fs: JournalFileSystem, activeFile: string, header: string): Promise<number> {
  const next = nextName(activeFile);
  await writeSynced(fs, next, header);
  await fs.rename(next, activeFile);
  await fs.syncDirectory(path.dirname(activeFile));
  return Buffer.byteLength(header, 'utf8');
}

type Stage = 'idle' | 'next-written' | 'old-renamed' | 'new-renamed';

export interface Installed {
  /** The path the old active file was renamed to; undefined when there was none. */
  rotated: string | undefined;
  /** Bytes in the new active file (its header line). */
  size: number;
}

/**
 * Installs a new active file that holds only `header`, rotating the old one
 * away. A step that fails throws; the next call resumes from the step that
 * failed, so a retry never rotates twice nor loses the rotated file's name.
 */
export class ActiveFileInstaller {
  private stage: Stage = 'idle';
  private rotated: string | undefined;
  private size = 0;

  constructor(
    private readonly fs: JournalFileSystem,
    private readonly activeFile: string,
  ) {}

  async install(header: string, now: Date): Promise<Installed> {
    const { fs, activeFile } = this;
    const next = nextName(activeFile);
    if (this.stage === 'idle') {
      this.rotated = undefined;
      await writeSynced(fs, next, header);
      this.size = Buffer.byteLength(header, 'utf8');
      this.stage = 'next-written';
    }
    if (this.stage === 'next-written') {
      if ((await fs.size(activeFile)) !== undefined) {
        const rotated = await freeRotatedName(fs, activeFile, now);
        await fs.rename(activeFile, rotated);
        this.rotated = rotated;
      }
      this.stage = 'old-renamed';
    }
    if (this.stage === 'old-renamed') {
      await fs.rename(next, activeFile);
      this.stage = 'new-renamed';
    }
    await fs.syncDirectory(path.dirname(activeFile));
    this.stage = 'idle';
    return { rotated: this.rotated, size: this.size };
  }
}
