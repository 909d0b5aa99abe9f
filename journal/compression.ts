/**
 * Gzipping rotated journal files, off the write path. The `.gz` appears under
 * its name only once it is complete and synced, and the plain file is removed
 * only after that, so a crash leaves at worst a stray `.gz.tmp` or both files,
 * which `settleCompression` cleans up at open.
 */
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { closeQuietly, writeFully, type JournalFileSystem } from './file-system';
import { isJournalFile } from './naming';

const gzip = promisify(zlib.gzip);
const TMP_SUFFIX = '.gz.tmp';

export async function compressRotated(fs: JournalFileSystem, plain: string): Promise<void> {
  const gz = `${plain}.gz`;
  const tmp = `${plain}${TMP_SUFFIX}`;
  const zipped = await gzip(await fs.readFile(plain));
  const handle = await fs.open(tmp, 'w');
  try {
    await writeFully(handle, zipped, 0);
    await handle.datasync();
    await handle.close();
  } catch (err) {
    await closeQuietly(handle);
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fs.rename(tmp, gz);
  await fs.syncDirectory(path.dirname(plain));
  await fs.unlink(plain);
}

export interface CompressionState {
  /** Rotated files still plain: a crash came before their compression. */
  plain: string[];
  /** What was cleaned up, one sentence each. */
  notes: string[];
}

/** At open: removes stray `.gz.tmp` files and plain files whose `.gz` is complete. */
export async function settleCompression(fs: JournalFileSystem, activeFile: string): Promise<CompressionState> {
  const dir = path.dirname(activeFile);
  const names = new Set(await fs.readdir(dir));
  const state: CompressionState = { plain: [], notes: [] };
  for (const name of names) {
    if (name.endsWith(TMP_SUFFIX) && isJournalFile(activeFile, name.slice(0, -'.tmp'.length))) {
      await fs.unlink(path.join(dir, name));
      state.notes.push(`journal ${activeFile}: removed ${name}, an unfinished compression`);
      continue;
    }
    if (name === path.basename(activeFile) || name.endsWith('.gz') || !isJournalFile(activeFile, name)) continue;
    if (names.has(`${name}.gz`)) {
      await fs.unlink(path.join(dir, name));
      state.notes.push(`journal ${activeFile}: removed ${name}, already compressed to ${name}.gz`);
    } else {
      state.plain.push(path.join(dir, name));
    }
  }
  return state;
}
