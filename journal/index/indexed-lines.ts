/**
 * Journal entries read back where the index says their lines are: a row's
 * file is found by its first seq (a cached listing, listed again when a line
 * is not where it was: a rotation or compression renamed the file), and the
 * line at its offset must carry the row's seq. The server's index
 * (journal-index.ts) and a restore's rebuild process (which opens the index
 * on its own) read through it.
 */
import { filesByFirstSeq } from './index-files';
import type { IndexedLine } from './index-store';
import { linesAt } from './offset-lines';
import { leadingSeq } from '../reader';
import { decodeLine, isHeader, type JournalEntry } from '../record';

export class IndexedLines {
  private files = new Map<number, string>();

  constructor(private readonly activeFile: string) {}

  /** The entries of `rows`, in their order; null when a line is not found even after listing the files again. */
  async read(rows: readonly IndexedLine[]): Promise<JournalEntry[] | null> {
    const byFile = new Map<number, Array<{ seq: number; offset: number }>>();
    for (const { seq, file, offset } of rows) {
      let wanted = byFile.get(file);
      if (wanted === undefined) byFile.set(file, (wanted = []));
      wanted.push({ seq, offset });
    }
    const found = new Map<number, JournalEntry>();
    for (const [file, wanted] of byFile) {
      let texts = await this.linesOf(file, wanted, false);
      if (texts === null) texts = await this.linesOf(file, wanted, true);
      if (texts === null) return null;
      for (const [seq, entry] of texts) found.set(seq, entry);
    }
    return rows.map((r) => found.get(r.seq) as JournalEntry);
  }

  /** The entries at `wanted` in the file of first seq `file`; null when one is missing or carries another seq. */
  private async linesOf(
    file: number,
    wanted: ReadonlyArray<{ seq: number; offset: number }>,
    relist: boolean,
  ): Promise<Map<number, JournalEntry> | null> {
    if (relist || !this.files.has(file))
      this.files = new Map((await filesByFirstSeq(this.activeFile)).map((s) => [s.first, s.file]));
    const path = this.files.get(file);
    if (path === undefined) return null;
    let texts: Map<number, string>;
    try {
      texts = await linesAt(
        path,
        wanted.map((w) => w.offset),
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const entries = new Map<number, JournalEntry>();
    for (const { seq, offset } of wanted) {
      const text = texts.get(offset);
      if (text === undefined || leadingSeq(text) !== seq) return null;
      const line = decodeLine(text);
      if (isHeader(line)) return null;
      entries.set(seq, line);
    }
    return entries;
  }
}
