/**
 * The journal's files by the firstSeq each holds, which names a file for the
 * index: rotation renames the active file and compression renames it again,
 * but its first seq stays. While a rotated file is being compressed its plain
 * and gzipped copies exist together for a moment; either will do, the plain
 * one is taken.
 */
import { journalFiles } from '../naming';
import { firstSeqOfFile } from '../reader';

export interface JournalFileStart {
  file: string;
  first: number;
}

/** The files that hold entries or may (the active one), ordered by first seq, one per first seq. */
export async function filesByFirstSeq(activeFile: string): Promise<JournalFileStart[]> {
  const starts: JournalFileStart[] = [];
  for (const file of await journalFiles(activeFile)) {
    let first: number | undefined;
    try {
      first = await firstSeqOfFile(file);
    } catch {
      continue; // renamed away meanwhile: its new name is listed too, or will be at the next look
    }
    if (first !== undefined) starts.push({ file, first });
  }
  // Plain before gzipped for the same first seq; a file that holds no entry (an empty rotated one) shares
  // its first seq with the next file: the later name wins, which is the one that can hold entries.
  starts.sort((a, b) => a.first - b.first || Number(a.file.endsWith('.gz')) - Number(b.file.endsWith('.gz')));
  return starts.filter((s, i) => i === 0 || s.first !== (starts[i - 1] as JournalFileStart).first);
}
