/**
 * The other job a rebuild process does (restore-child.ts): the state one
 * `restoredb` entry puts in place, rebuilt to the entry's known target, with
 * no target to find and nothing to list. A read replica hands it over when
 * it reaches such an entry (src/replication/replica/replica-restorer.ts),
 * so that the replay of the database's history runs apart from the replica's
 * server, under the same bounds as a live restore.
 *
 * Like a live restore's rebuild it reads through the journal index when it
 * is handed one (only the database's lines and its templates'), and the
 * whole journal when not, or when the index is not whole.
 */
import { EngineError } from '../../errors';
import { rebuildAt, throughIndex } from './restore-rebuild';

/** What the rebuild process is handed for one `restoredb` entry: plain data (it crosses as JSON). */
export interface StateJob {
  readonly kind: 'state';
  /** The database's file name (`<name>.db`), as the journal names it. */
  readonly db: string;
  /** The entry's target: the state right after this seq is rebuilt. */
  readonly seq: number;
  /** Through what the journal index is read (the seq before the entry's own). */
  readonly lastSeq: number;
  readonly logFile: string;
  readonly snapshotDir: string | null;
  /** The journal index, settled through `lastSeq`; null: read the whole journal. */
  readonly indexFile: string | null;
  /** An empty scratch directory the caller made for the state (and removes). */
  readonly out: string;
}

/** The rebuilt file in `job.out`; RESTORE_TOO_OLD when what the journal keeps cannot give it. */
export function rebuildState(job: StateJob): Promise<string> {
  return throughIndex(job, async (indexed) => {
    const file = await rebuildAt(job, indexed, job.seq);
    if (file === null)
      throw new EngineError('RESTORE_TOO_OLD', {
        db: job.db,
        target: `seq ${job.seq}`,
        detail: 'the database did not exist there in the journal read here',
      });
    return file;
  });
}
