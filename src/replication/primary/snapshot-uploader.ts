/**
 * The primary's side of the snapshot bucket: after each snapshot round, the
 * round goes to JetStream, for new replicas to start from. It lives beside
 * the round, never in a write's way: a failure is logged, and the next round
 * (which is newer, and shares the copies already put) tries again.
 */
import type { SnapshotManifest } from '../../snapshots/manifest';
import type { JournalStream } from '../stream/journal-stream';
import { snapshotBucketOf } from '../stream/snapshot-bucket-plan';
import { SnapshotStore } from '../stream/snapshot-store';

export class SnapshotUploader {
  private store: SnapshotStore | null = null;
  /** The stream `store` was opened on: a promoted standby ships on a connection of its own. */
  private storeStream: JournalStream | null = null;

  constructor(
    private readonly snapshotDir: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Puts the round; never rejects. `stream` is null while JetStream has not been reached. */
  async upload(stream: JournalStream | null, manifest: SnapshotManifest): Promise<void> {
    const what = `snapshot round ${manifest.base}-${manifest.through}`;
    if (stream === null) {
      this.log(`${what} was not put in JetStream, which has not been reached yet: the next round tries again`);
      return;
    }
    try {
      if (this.store === null || this.storeStream !== stream) {
        this.store = await SnapshotStore.create(stream);
        this.storeStream = stream;
      }
      const result = await this.store.upload(this.snapshotDir, manifest);
      this.log(
        `${what} put in JetStream bucket ${this.store.bucket} as ${result.round} (${result.copiesPut} copies sent, ${result.removed} objects of older rounds removed)`,
      );
    } catch (error) {
      this.store = null;
      this.log(
        `${what} could not be put in JetStream bucket ${snapshotBucketOf(stream.settings.stream)} (${error instanceof Error ? error.message : String(error)}): the next round tries again`,
      );
    }
  }
}
