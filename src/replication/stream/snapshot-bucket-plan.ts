/**
 * What the snapshot bucket should hold, decided without NATS: the names of
 * a round's objects, which copies an upload still has to put, and which
 * objects go when only the newest rounds are kept. Copies are shared by
 * rounds (a database unchanged since the last round keeps its copy), so a
 * copy goes only when no kept round refers to it.
 */
import type { SnapshotManifest } from '../../snapshots/manifest';

/** The newest rounds the bucket keeps: the one replicas start from, and the one before in case a download meets an upload. */
export const ROUNDS_KEPT = 2;

const ROUND_PREFIX = 'rounds/';
const FILE_PREFIX = 'files/';

/** The bucket of a stream's snapshot rounds. */
export function snapshotBucketOf(stream: string): string {
  return `${stream}_snapshots`;
}

/** `round-…json` → `rounds/round-…json`. */
export function roundObjectName(manifestFile: string): string {
  return `${ROUND_PREFIX}${manifestFile}`;
}

/** `school@1190.db` → `files/school@1190.db`. */
export function fileObjectName(copyFile: string): string {
  return `${FILE_PREFIX}${copyFile}`;
}

export function isRoundObject(name: string): boolean {
  return name.startsWith(ROUND_PREFIX);
}

export function isFileObject(name: string): boolean {
  return name.startsWith(FILE_PREFIX);
}

/** A round as the bucket holds it: its object's name and its manifest. */
export interface BucketRound {
  readonly name: string;
  readonly manifest: SnapshotManifest;
}

/** Oldest first, as listRounds orders a snapshot directory: by base, then through. */
export function byAge(rounds: readonly BucketRound[]): BucketRound[] {
  return [...rounds].sort(
    (a, b) =>
      a.manifest.base - b.manifest.base || a.manifest.through - b.manifest.through || (a.name < b.name ? -1 : 1),
  );
}

/** The copy files of `manifest` whose objects `present` (object names) lacks, each once. */
export function copiesToPut(manifest: SnapshotManifest, present: ReadonlySet<string>): string[] {
  const files = new Set(manifest.databases.map((copy) => copy.file));
  return [...files].filter((file) => !present.has(fileObjectName(file)));
}

export interface BucketCleanup {
  /** Manifests of rounds older than the kept ones. */
  readonly rounds: string[];
  /** Copies no kept round refers to. */
  readonly files: string[];
}

/**
 * Keeps the newest `keep` rounds; the others' manifests go, then every copy
 * (of `objects`, the bucket's names) that no kept round refers to, including
 * copies a failed upload left without a manifest.
 */
export function bucketCleanup(
  rounds: readonly BucketRound[],
  objects: readonly string[],
  keep = ROUNDS_KEPT,
): BucketCleanup {
  const ordered = byAge(rounds);
  const kept = ordered.slice(Math.max(0, ordered.length - keep));
  const referenced = new Set(
    kept.flatMap((round) => round.manifest.databases.map((copy) => fileObjectName(copy.file))),
  );
  return {
    rounds: ordered.slice(0, ordered.length - kept.length).map((round) => round.name),
    files: objects.filter((name) => isFileObject(name) && !referenced.has(name)),
  };
}
