/**
 * The journal writer: appends entries to the active file through file
 * descriptors it owns, so that it can check every write, sync, undo a failed
 * chunk and rotate without ever leaving a partial line or a seq twice.
 *
 * - seq is assigned when an entry is appended, so the order of lines is the
 *   order of seq; `lastSeq` is the last seq durably written.
 * - One chunk is in flight at a time; entries appended meanwhile are written
 *   together in the next one (group commit), and with fsync one fdatasync
 *   covers them all.
 * - A chunk that fails is cut off the file again, and it and every entry
 *   waiting behind it are refused with JournalUnavailableError; seq goes back to
 *   the last durable one. The next append tries again, so writes resume once
 *   the disk has room.
 */
import { compressRotated } from './compression';
import {
  closeQuietly,
  nodeFileSystem,
  writeFully,
  type JournalFileHandle,
  type JournalFileSystem,
} from './file-system';
import { encodeLine, engineDifferences, JOURNAL_FORMAT, type JournalEntry, type JournalHeader } from './record';
import { firstSeqOfFile } from './reader';
import { recoverJournal } from './recover';
import { ActiveFileInstaller, replaceActiveFile } from './rotation';
import { JournalUnavailableError } from './unavailable';

export { JournalUnavailableError } from './unavailable';

export type HeaderFields = Omit<JournalHeader, 'kind' | 'format' | 'started' | 'firstSeq'>;

/** The journal was last written by another engine than the writer's. */
export interface EngineChange {
  /** The header of the active file as it was found. */
  readonly previous: JournalHeader;
  /** The last seq written by that engine. */
  readonly lastSeqBefore: number;
}

export interface JournalWriterOptions {
  /** The active journal file; rotated files sit beside it. */
  file: string;
  /** Rotate once a chunk makes the active file reach this size, in bytes. */
  maxSize: number;
  /** fdatasync each chunk before its entries count as written. */
  fsync: boolean;
  /** Gzip rotated files. */
  compress: boolean;
  header: HeaderFields;
  /** Told of anything odd: crash leftovers repaired at open, a rotation or compression that failed. */
  warn?: (message: string) => void;
  /** The file system to write through; tests inject faults here. Defaults to node's fs. */
  fileSystem?: JournalFileSystem;
  /** Told of every durable chunk and every rotation, for metrics. */
  observer?: JournalObserver;
}

/** What an entry says about its outcome: enough to count it by kind, error class and code. */
export type EntryOutcome = Pick<JournalEntry, 'kind' | 'ok' | 'class' | 'code'>;

/**
 * Told what the writer did, once it is durable: the entries of a chunk, its
 * bytes and how long writing (and syncing) it took; a rotation. Called on the
 * writer's path, so it must be quick and must not throw.
 */
export interface JournalObserver {
  written(entries: readonly EntryOutcome[], bytes: number, seconds: number, lastSeq: number): void;
  rotated(): void;
}

/** An entry as the caller gives it: seq and ts are the writer's. */
export type NewEntry = Omit<JournalEntry, 'seq' | 'ts'>;

/** An entry once durably written, with its JSON as in the file but without the crc field. */
export interface AppendedEntry {
  entry: JournalEntry;
  json: string;
}

/** A chunk as written to the file: entries firstSeq..lastSeq, their lines crc included. */
export interface ShippedChunk {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly lines: string;
}

/**
 * Somewhere else a chunk must reach before its entries count as written (the
 * replicated stream): the writer waits for `ship` after its own write and
 * sync, and a rejection refuses the chunk exactly as a failed disk write does
 * (it is cut off the file again).
 */
export interface ChunkShipper {
  /** The fencing token stamped on every entry appended while this shipper is set. */
  readonly epoch: number;
  ship(chunk: ShippedChunk): Promise<void>;
}

/**
 * Where a chunk's lines went: the active file, named by the seq its header
 * gives as `firstSeq` (a file keeps it through rotation and compression, which
 * rename it), and the byte offset of the chunk's first line in it. Each next
 * line follows the previous one: see lineBytes.
 */
export interface ChunkPosition {
  readonly fileFirstSeq: number;
  readonly offset: number;
}

/** Told of the entries of each chunk once durably written, in seq order, and where they are; it must not throw. */
export type AppendListener = (entries: readonly AppendedEntry[], position: ChunkPosition) => void;

/** `,"crc":"<8 hex>"}` and the newline: what encodeLine adds after the entry's JSON minus its closing brace. */
const CRC_TAIL_LENGTH = ',"crc":"00000000"}\n'.length;

/** The bytes an appended entry's line takes in the file, newline included, from its JSON without the crc. */
export function lineBytes(json: string): number {
  return Buffer.byteLength(json, 'utf8') - 1 + CRC_TAIL_LENGTH;
}

interface Pending {
  seq: number;
  entry: JournalEntry;
  line: string;
  resolve(): void;
  reject(error: Error): void;
}

/** Errors at open that a full or failing disk causes: the server starts, and the next append tries again. */
const TRANSIENT_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO']);

export class JournalWriter {
  private readonly fs: JournalFileSystem;
  private readonly installer: ActiveFileInstaller;
  private readonly started = new Date().toISOString();
  private handle: JournalFileHandle | null = null;
  /** Bytes of whole lines in the active file: a failed chunk is cut back to this. */
  private durableSize = 0;
  private durableSeq = 0;
  private assignedSeq = 0;
  private rotationDue = false;
  /** The last chunk filled the file: rotate while idle, once; after a failure the next append retries. */
  private rotateWhenIdle = false;
  private pending: Pending[] = [];
  private running: Promise<void> | null = null;
  private compression: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly listeners = new Set<AppendListener>();
  private shipper: ChunkShipper | null = null;
  private engineChange: EngineChange | null = null;
  /** The firstSeq of the active file: its header's, or (a file from before headers said it) its first entry's. */
  private activeFirstSeq = 1;

  private constructor(private readonly options: JournalWriterOptions) {
    this.fs = options.fileSystem ?? nodeFileSystem;
    this.installer = new ActiveFileInstaller(this.fs, options.file);
  }

  /** Opens the journal: finishes what a crash interrupted, repairs a torn tail, and continues after the last seq. */
  static async open(options: JournalWriterOptions): Promise<JournalWriter> {
    const writer = new JournalWriter(options);
    await writer.init();
    return writer;
  }

  /** The last seq durably written (synced, with fsync). */
  get lastSeq(): number {
    return this.durableSeq;
  }

  /**
   * Set when the journal was last written by another engine (better-sqlite3,
   * SQLite or time zone) than this writer's: the entries up to
   * `lastSeqBefore` are in files whose headers name it, later ones are not.
   */
  get engineChangedAtOpen(): EngineChange | null {
    return this.engineChange;
  }

  /** The last seq given to an append, written or not yet. */
  get lastAssignedSeq(): number {
    return this.assignedSeq;
  }

  /**
   * Tells `listener` of every chunk from now on, right after the chunk is
   * durable and `lastSeq` covers it: an entry with a seq above the `lastSeq`
   * read at subscription reaches the listener, none at or below it does.
   * Returns the unsubscribe.
   */
  onAppended(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * From now on every chunk must also reach `shipper` before it counts as
   * written, and entries carry its epoch; null writes to the file alone.
   */
  shipThrough(shipper: ChunkShipper | null): void {
    this.shipper = shipper;
  }

  /**
   * Writes entries that already have their seq and time (a replica's copy of
   * its primary's journal): they must continue the journal without a gap. No
   * shipper may be set: they come from the stream.
   */
  appendCopied(entries: readonly JournalEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new JournalUnavailableError(closedError()));
    if (this.shipper !== null)
      return Promise.reject(new Error('copied entries cannot be written while the journal is shipped'));
    const promises: Promise<void>[] = [];
    for (const entry of entries) {
      if (entry.seq !== this.assignedSeq + 1)
        return Promise.reject(new Error(`entry ${entry.seq} does not follow ${this.assignedSeq}`));
      this.assignedSeq = entry.seq;
      const line = encodeLine(entry);
      promises.push(
        new Promise<void>((resolve, reject) => this.pending.push({ seq: entry.seq, entry, line, resolve, reject })),
      );
    }
    this.pump();
    return Promise.all(promises).then(() => undefined);
  }

  /**
   * Makes an empty journal continue after `seq`: a replica that starts from a
   * snapshot round holds the databases through the round's base, and its
   * copy of the journal begins after it. The active file's header says
   * `firstSeq: seq + 1` (so a reopen finds the journal ending at `seq`); it
   * is rewritten in one rename. Refused once the journal holds an entry.
   */
  async startAfter(seq: number): Promise<void> {
    if (this.closed) throw new JournalUnavailableError(closedError());
    if (!Number.isSafeInteger(seq) || seq < 0) throw new Error(`a journal cannot start after seq ${seq}`);
    if (this.assignedSeq !== 0 || this.running !== null || this.pending.length > 0) {
      throw new Error(
        `the journal can start after seq ${seq} only while it holds no entry (it is at seq ${this.assignedSeq})`,
      );
    }
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close();
    this.durableSeq = this.assignedSeq = seq;
    try {
      this.durableSize = await replaceActiveFile(this.fs, this.options.file, this.headerLine());
      this.rotationDue = false;
    } catch (error) {
      this.durableSeq = this.assignedSeq = 0;
      throw error;
    }
  }

  private warn(message: string): void {
    this.options.warn?.(message);
  }

  private async init(): Promise<void> {
    const recovered = await recoverJournal(this.fs, this.options.file, (message) => this.warn(message));
    if (this.options.compress) recovered.plain.forEach((plain) => this.queueCompression(plain));
    this.durableSeq = this.assignedSeq = recovered.lastSeq;
    this.durableSize = recovered.activeSize ?? 0;
    this.rotationDue = recovered.activeSize !== undefined && recovered.activeSize >= this.options.maxSize;
    if (recovered.activeSize !== undefined) {
      this.activeFirstSeq =
        recovered.activeHeader?.firstSeq ?? (await firstSeqOfFile(this.options.file)) ?? recovered.lastSeq + 1;
    }
    // Every entry of a file was written by the engine its header names: another engine begins a new file.
    const previous = recovered.activeHeader;
    if (previous !== undefined && engineDifferences(previous, this.options.header).length > 0) {
      this.engineChange = { previous, lastSeqBefore: recovered.lastSeq };
      this.rotationDue = true;
    }
    try {
      await this.ensureActive();
    } catch (err) {
      if (!TRANSIENT_CODES.has(String((err as NodeJS.ErrnoException).code))) throw err;
      this.warn(
        `journal ${this.options.file}: cannot be opened yet (${(err as Error).message}); the next write tries again`,
      );
    }
  }

  /**
   * Appends an entry and gives its seq at once; `written` resolves when the
   * whole line is written (and fdatasync'ed, with fsync), and rejects with
   * JournalUnavailableError when it could not be.
   */
  append(entry: NewEntry): { seq: number; written: Promise<void> } {
    const { seqs, written } = this.appendAll([entry]);
    return { seq: seqs[0] ?? -1, written };
  }

  /**
   * Appends entries that stand or fall together (the batches of one write
   * group): they go into the same chunk, so either every one of them is
   * written or, the chunk being cut back on failure, none is.
   */
  appendAll(entries: readonly NewEntry[]): { seqs: number[]; written: Promise<void> } {
    if (this.closed) return { seqs: [], written: Promise.reject(new JournalUnavailableError(closedError())) };
    const seqs: number[] = [];
    const promises: Promise<void>[] = [];
    for (const entry of entries) {
      const seq = ++this.assignedSeq;
      const full: JournalEntry =
        this.shipper === null
          ? { seq, ts: new Date().toISOString(), ...entry }
          : { seq, ts: new Date().toISOString(), ...entry, epoch: this.shipper.epoch };
      const line = encodeLine(full);
      promises.push(
        new Promise<void>((resolve, reject) => this.pending.push({ seq, entry: full, line, resolve, reject })),
      );
      seqs.push(seq);
    }
    // One pump after all of them: the chunk it starts takes every pending entry at once.
    this.pump();
    return { seqs, written: Promise.all(promises).then(() => undefined) };
  }

  private pump(): void {
    if (this.running !== null) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      // An append made between the end of the loop and here found the writer still running.
      if (this.pending.length > 0) this.pump();
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.pending.length === 0 && this.rotateWhenIdle) await this.rotateWhileIdle();
      if (this.pending.length === 0) return;
      const chunk = this.pending;
      this.pending = [];
      await this.writeChunk(chunk);
    }
  }

  private async writeChunk(chunk: Pending[]): Promise<void> {
    const lines = chunk.map((p) => p.line).join('');
    const buffer = Buffer.from(lines, 'utf8');
    const started = performance.now();
    try {
      const handle = await this.ensureActive();
      await writeFully(handle, buffer, this.durableSize);
      if (this.options.fsync) await handle.datasync();
      // Taken once, so a shipper set while the chunk is on its way does not see half of it.
      const shipper = this.shipper;
      if (shipper !== null)
        await shipper.ship({
          firstSeq: (chunk[0] as Pending).seq,
          lastSeq: (chunk[chunk.length - 1] as Pending).seq,
          lines,
        });
    } catch (cause) {
      await this.cutBack();
      const refused = [...chunk, ...this.pending];
      this.pending = [];
      this.assignedSeq = this.durableSeq;
      const error = new JournalUnavailableError(cause);
      for (const p of refused) p.reject(error);
      return;
    }
    const position: ChunkPosition = { fileFirstSeq: this.activeFirstSeq, offset: this.durableSize };
    this.durableSize += buffer.length;
    this.durableSeq = (chunk[chunk.length - 1] as Pending).seq;
    this.options.observer?.written(
      chunk.map((p) => p.entry),
      buffer.length,
      (performance.now() - started) / 1000,
      this.durableSeq,
    );
    if (this.durableSize >= this.options.maxSize) this.rotationDue = this.rotateWhenIdle = true;
    this.tellListeners(chunk, position);
    for (const p of chunk) p.resolve();
  }

  /** Synchronously with the durableSeq update, so no follower sees a seq both in the files and live, or in neither. */
  private tellListeners(chunk: readonly Pending[], position: ChunkPosition): void {
    if (this.listeners.size === 0) return;
    // The JSON without the crc is cut from the line rather than serialized again on the write path.
    const appended = chunk.map((p) => ({ entry: p.entry, json: `${p.line.slice(0, -CRC_TAIL_LENGTH)}}` }));
    for (const listener of this.listeners) {
      try {
        listener(appended, position);
      } catch (err) {
        this.warn(`journal listener failed: ${(err as Error).message}`);
      }
    }
  }

  /**
   * Removes whatever part of a failed chunk reached the file. If that fails
   * too, the handle is dropped anyway: reopening compares the file's size with
   * the durable size and cuts again before anything is appended.
   */
  private async cutBack(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle === null) return;
    try {
      await handle.truncate(this.durableSize);
    } catch {
      // Redone at the next reopen.
    }
    await closeQuietly(handle);
  }

  /** The handle of an active file that ends with a whole line and is below maxSize, rotating or reopening as needed. */
  private async ensureActive(): Promise<JournalFileHandle> {
    if (this.rotationDue || (this.handle === null && (await this.fs.size(this.options.file)) === undefined))
      await this.rotate();
    this.handle ??= await this.reopen();
    return this.handle;
  }

  private async reopen(): Promise<JournalFileHandle> {
    const handle = await this.fs.open(this.options.file, 'r+');
    try {
      const { size } = await handle.stat();
      if (size > this.durableSize) await handle.truncate(this.durableSize);
      else this.durableSize = size;
      return handle;
    } catch (err) {
      await closeQuietly(handle);
      throw err;
    }
  }

  /** Replaces the active file by one holding only a header; the entries of the old one are already durable. */
  private async rotate(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) {
      try {
        if (this.options.fsync) await handle.datasync();
      } finally {
        await closeQuietly(handle);
      }
    }
    const { rotated, size } = await this.installer.install(this.headerLine(), new Date());
    this.durableSize = size;
    this.rotationDue = false;
    if (rotated !== undefined) this.options.observer?.rotated();
    if (rotated !== undefined && this.options.compress) this.queueCompression(rotated);
  }

  /** Rotates as soon as the file is full rather than at the next append, so a quiet journal's files are complete. */
  private async rotateWhileIdle(): Promise<void> {
    this.rotateWhenIdle = false;
    try {
      await this.rotate();
    } catch (err) {
      this.warn(
        `journal ${this.options.file}: rotation failed (${(err as Error).message}); the next write tries again`,
      );
    }
  }

  private headerLine(): string {
    const firstSeq = this.durableSeq + 1;
    this.activeFirstSeq = firstSeq;
    return encodeLine({
      kind: 'header',
      format: JOURNAL_FORMAT,
      started: this.started,
      ...this.options.header,
      firstSeq,
    });
  }

  private queueCompression(plain: string): void {
    this.compression = this.compression
      .then(() => compressRotated(this.fs, plain))
      .catch((err: Error) =>
        this.warn(`journal ${plain}: compression failed (${err.message}); it stays plain until the next start`),
      );
  }

  /** Writes what is pending, waits for compression, and closes the file; later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running !== null) await this.running;
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await handle.close();
    await this.compression;
  }
}

function closedError(): Error {
  return Object.assign(new Error('the journal is closed'), { code: 'ECLOSED' });
}
