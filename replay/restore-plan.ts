/**
 * Where a restore starts: the newest snapshot round at or before the target
 * whose journal (from its base + 1) is still all there, else the journal from
 * its first entry, which must then be seq 1. A target that neither reaches is
 * older than what is kept: refused with the oldest point that can be restored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { journalFirstSeq } from '../journal/reader';
import { listRounds, type SnapshotRound } from '../src/snapshots/manifest';
import type { ReplayOptions } from './replay-options';

export class TooOldError extends Error {}

export interface RestorePlan {
  /** The round to start from, or undefined: the journal alone. */
  readonly round: SnapshotRound | undefined;
}

function serves(round: SnapshotRound, until: ReplayOptions['until']): boolean {
  if (until === null) return true;
  return 'seq' in until ? round.through <= until.seq : Date.parse(round.throughTime) <= until.time;
}

function describeTarget(until: ReplayOptions['until']): string {
  if (until === null) return 'the latest state';
  return 'seq' in until ? `seq ${until.seq}` : new Date(until.time).toISOString();
}

function complete(round: SnapshotRound, dir: string): boolean {
  return round.databases.every((d) => fs.existsSync(path.join(dir, d.file)));
}

/** What a plan needs: the journal, where rounds are, and the target. */
export type PlanOptions = Pick<ReplayOptions, 'logFile' | 'snapshotDir' | 'until'>;

export async function planRestore(options: PlanOptions): Promise<RestorePlan> {
  const first = (await journalFirstSeq(options.logFile)) ?? 1;
  const dir = options.snapshotDir;
  const rounds = dir === null ? [] : listRounds(dir).filter((round) => round.base + 1 >= first && complete(round, dir));
  const round = rounds.filter((r) => serves(r, options.until)).at(-1);
  if (round !== undefined || first <= 1) return { round };
  const oldest = rounds[0];
  const target = describeTarget(options.until);
  if (oldest !== undefined) {
    throw new TooOldError(
      `${target} is older than what is kept: the oldest point that can be restored is seq ${oldest.through} (${oldest.throughTime})`,
    );
  }
  const why = dir === null ? '-no-snapshots was given' : `no snapshot in ${dir} covers the entries before it`;
  if (options.until === null)
    throw new TooOldError(`cannot rebuild: the journal starts at seq ${first} (older entries were removed) and ${why}`);
  throw new TooOldError(`${target} is older than what is kept: the journal starts at seq ${first} and ${why}`);
}

/** Copies the round's files into `out` (one database with `db`). */
export function copyRound(round: SnapshotRound, snapshotDir: string, out: string, db: string | null): string[] {
  const copied: string[] = [];
  for (const copy of round.databases) {
    if (db !== null && copy.db !== db) continue;
    fs.copyFileSync(path.join(snapshotDir, copy.file), path.join(out, copy.db));
    copied.push(copy.db);
  }
  return copied;
}
