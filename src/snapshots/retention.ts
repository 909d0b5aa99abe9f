/**
 * Retention: removes rotated journal files that a snapshot round covers (all
 * their entries are at or below the newest round's base, so no restore from
 * that round needs them) and that are older than the retention time or beyond
 * the number of files kept; then the rounds that can no longer be used (the
 * journal after their base is gone), always keeping the newest; then copies no
 * round refers to. The active journal file is never removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { journalFiles } from '../../journal/naming';
import { firstSeqOfFile, leadingSeqOfLine, readFileLines } from '../../journal/reader';
import { lastSeqOfFile } from '../../journal/tail';
import type { LogRetain } from '../config/options';
import { listRounds, type SnapshotRound } from './manifest';

export interface RetentionInput {
  readonly logFile: string;
  readonly snapshotDir: string;
  readonly retain: LogRetain | null;
  readonly now: number;
}

export interface RetentionResult {
  readonly removedFiles: string[];
  readonly removedRounds: string[];
}

interface FileRange {
  file: string;
  /** Undefined when the file holds no entry. */
  first: number | undefined;
  last: number;
  mtimeMs: number;
}

/** First and last seq of a journal file, read cheaply: its start, and its tail (gzip is read through). */
async function rangeOf(file: string): Promise<FileRange> {
  const mtimeMs = fs.statSync(file).mtimeMs;
  const first = await firstSeqOfFile(file);
  let last = 0;
  if (!file.endsWith('.gz')) last = lastSeqOfFile(file);
  else for await (const line of readFileLines(file)) last = Math.max(last, leadingSeqOfLine(line) ?? 0);
  return { file, first, last, mtimeMs };
}

/** Rotated files that may go: covered by the newest round, and outside what -log-retain keeps. */
function removable(rotated: readonly FileRange[], covered: number, retain: LogRetain, now: number): FileRange[] {
  const newestFirst = [...rotated].sort((a, b) => b.last - a.last || b.mtimeMs - a.mtimeMs);
  return newestFirst.filter((range, index) => {
    if (range.last > covered) return false;
    return 'files' in retain ? index >= retain.files : now - range.mtimeMs > retain.ms;
  });
}

/** Rounds whose journal (from base + 1) is no longer all there, except the newest. */
function unusable(rounds: readonly SnapshotRound[], firstKept: number): SnapshotRound[] {
  return rounds.slice(0, -1).filter((round) => round.base + 1 < firstKept);
}

function removeUnreferencedCopies(snapshotDir: string, rounds: readonly SnapshotRound[]): void {
  const referenced = new Set(rounds.flatMap((round) => round.databases.map((d) => d.file)));
  for (const name of fs.readdirSync(snapshotDir)) {
    if (/@\d+\.db$/.test(name) && !referenced.has(name)) fs.rmSync(path.join(snapshotDir, name), { force: true });
  }
}

export async function applyRetention(input: RetentionInput): Promise<RetentionResult> {
  const result: RetentionResult = { removedFiles: [], removedRounds: [] };
  const rounds = listRounds(input.snapshotDir);
  const newest = rounds.at(-1);
  if (newest === undefined) return result;
  const active = path.resolve(input.logFile);
  const ranges = await Promise.all((await journalFiles(input.logFile)).map(rangeOf));
  const rotated = ranges.filter((r) => path.resolve(r.file) !== active);
  if (input.retain !== null) {
    for (const range of removable(rotated, newest.base, input.retain, input.now)) {
      fs.rmSync(range.file, { force: true });
      result.removedFiles.push(range.file);
    }
  }
  const kept = ranges.filter((r) => !result.removedFiles.includes(r.file) && r.first !== undefined);
  const firstKept = kept.length === 0 ? newest.base + 1 : Math.min(...kept.map((r) => r.first as number));
  for (const round of unusable(rounds, firstKept)) {
    fs.rmSync(round.path, { force: true });
    result.removedRounds.push(round.path);
  }
  removeUnreferencedCopies(
    input.snapshotDir,
    rounds.filter((r) => !result.removedRounds.includes(r.path)),
  );
  return result;
}
