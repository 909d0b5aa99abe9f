/**
 * Snapshot rounds kept in JetStream, for replicas to start from: an object
 * store bucket `<stream>_snapshots` beside the stream, holding each round's
 * manifest (`rounds/<manifest file>`) and the copies it refers to
 * (`files/<copy file>`), under the names they have in a snapshot directory.
 * The primary puts a round's copies first and its manifest last, so a
 * manifest in the bucket always has its copies there; a replica downloads
 * them into its own snapshot directory in the same order, making a round
 * that restore and replay can use as they use the server's own.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { JetStreamApiError } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { syncFile } from '../../engine/files/database-file';
import { manifestName, parseManifest, writeManifest, type SnapshotManifest } from '../../snapshots/manifest';
import type { JournalStream } from './journal-stream';
import {
  bucketCleanup,
  byAge,
  copiesToPut,
  fileObjectName,
  isRoundObject,
  roundObjectName,
  snapshotBucketOf,
  type BucketRound,
} from './snapshot-bucket-plan';

/** JetStream's code for "stream not found". */
const STREAM_NOT_FOUND = 10059;

/** What an upload did, for its log line. */
export interface UploadResult {
  readonly round: string;
  readonly copiesPut: number;
  readonly removed: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class SnapshotStore {
  private constructor(
    private readonly store: ObjectStore,
    readonly bucket: string,
  ) {}

  /** The stream's bucket, made when missing with as many copies as the stream (the primary's side). */
  static async create(stream: JournalStream): Promise<SnapshotStore> {
    const bucket = snapshotBucketOf(stream.settings.stream);
    const store = await new Objm(stream.jetStream).create(bucket, { replicas: stream.settings.replicas });
    return new SnapshotStore(store, bucket);
  }

  /** The bucket, or null when no primary ever made one (a replica's side: there is no round to start from). */
  static async existing(stream: JournalStream): Promise<SnapshotStore | null> {
    const bucket = snapshotBucketOf(stream.settings.stream);
    try {
      // The object store's own stream, by the client's naming rule.
      await stream.jetStreamManager.streams.info(`OBJ_${bucket}`);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === STREAM_NOT_FOUND) return null;
      throw error;
    }
    return new SnapshotStore(await new Objm(stream.jetStream).open(bucket, false), bucket);
  }

  /**
   * Puts the round `manifest` of `snapshotDir`: the copies the bucket lacks,
   * then the manifest; then removes what only older rounds needed.
   */
  async upload(snapshotDir: string, manifest: SnapshotManifest): Promise<UploadResult> {
    const present = new Set(await this.names());
    const missing = copiesToPut(manifest, present);
    for (const file of missing) await this.putFile(fileObjectName(file), path.join(snapshotDir, file));
    const round = manifestName(manifest.base, manifest.through);
    await this.store.putBlob(
      { name: roundObjectName(round) },
      encoder.encode(`${JSON.stringify(manifest, null, 2)}\n`),
    );
    const cleanup = bucketCleanup(await this.rounds(), await this.names());
    // Manifests first: a round never refers to a copy that is gone.
    for (const name of [...cleanup.rounds, ...cleanup.files]) await this.store.delete(name);
    return { round, copiesPut: missing.length, removed: cleanup.rounds.length + cleanup.files.length };
  }

  /** The newest round in the bucket, or null when it holds none. */
  async newestRound(): Promise<SnapshotManifest | null> {
    return byAge(await this.rounds()).at(-1)?.manifest ?? null;
  }

  /**
   * Writes the round `manifest` into `snapshotDir`: its copies (each synced,
   * under a temporary name until whole), then its manifest, durably: as in
   * a round taken locally, the manifest is what makes the round exist.
   */
  async download(manifest: SnapshotManifest, snapshotDir: string): Promise<void> {
    fs.mkdirSync(snapshotDir, { recursive: true });
    for (const file of new Set(manifest.databases.map((copy) => copy.file)))
      await this.getFile(fileObjectName(file), path.join(snapshotDir, file));
    writeManifest(snapshotDir, manifest);
  }

  private async names(): Promise<string[]> {
    return (await this.store.list()).filter((info) => !info.deleted).map((info) => info.name);
  }

  /** The rounds whose manifest can be read; one deleted meanwhile, or foreign, is left out. */
  private async rounds(): Promise<BucketRound[]> {
    const rounds: BucketRound[] = [];
    for (const name of (await this.names()).filter(isRoundObject)) {
      const blob = await this.store.getBlob(name);
      const manifest = blob === null ? undefined : parseManifest(decoder.decode(blob));
      if (manifest !== undefined) rounds.push({ name, manifest });
    }
    return rounds;
  }

  private async putFile(name: string, file: string): Promise<void> {
    // Streamed: a database can be larger than what is wise to hold in memory.
    await this.store.put({ name }, Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>);
  }

  private async getFile(name: string, file: string): Promise<void> {
    const result = await this.store.get(name);
    if (result === null) throw new Error(`the bucket ${this.bucket} has no ${name}`);
    const temporary = `${file}.download`;
    const handle = await fsp.open(temporary, 'w');
    try {
      // Read with a reader: the DOM's ReadableStream typing (the tests' compile) has no async iterator.
      const reader = result.data.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) await handle.write(read.value);
      // The client checks the object's digest once all of it has been read.
      // Typed Error | null, but it settles with undefined when all went well.
      const error = (await result.error) ?? null;
      if (error !== null) throw error;
    } finally {
      await handle.close();
    }
    syncFile(temporary);
    fs.renameSync(temporary, file);
  }
}
