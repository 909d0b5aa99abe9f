/**
 * The journal writer: appends entries to the active file through
 * rotating-file-stream, which rotates it by size.
 *
 * - seq is assigned when an entry is appended, so the order of lines is the
 *   order of seq.
 * - Entries that arrive while a write is in flight are written together with
 *   the next one (group commit); with fsync on, one sync covers them all.
 * - Only one chunk is in flight at a time, and this writer counts bytes the
 *   way rotating-file-stream does (it rotates after the write that reaches the
 *   size), so it knows which chunk starts a new file and puts the header there.
 * - "Written" means handed to the operating system (the stream's callback),
 *   which survives a killed process; fsync also survives a power cut
 *   (rotating-file-stream never syncs, design.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { readCheckpoint, writeCheckpoint } from './checkpoint';
import { rotatedName } from './naming';
import { encodeLine, JOURNAL_FORMAT, type JournalEntry, type JournalHeader } from './record';
import { lastSeqOfFile, lastSeqOfJournal, repairTornTail } from './tail';

export type HeaderFields = Omit<JournalHeader, 'kind' | 'format' | 'started'>;

export interface JournalWriterOptions {
  /** The active journal file; rotated files sit beside it. */
  file: string;
  /** Rotate after the write that makes the file reach this size, in bytes. */
  maxSize: number;
  /** Sync to disk before an append counts as written. */
  fsync: boolean;
  /** Gzip rotated files. */
  compress: boolean;
  header: HeaderFields;
  /** Told of anything odd found at open (a torn tail repaired). */
  warn?: (message: string) => void;
}

/** An entry as the caller gives it: seq and ts are the writer's. */
export type NewEntry = Omit<JournalEntry, 'seq' | 'ts'>;

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export class JournalWriter {
  private stream!: RotatingFileStream;
  private seq = 0;
  /** Bytes in the active file, counted as rotating-file-stream counts them. */
  private size = 0;
  private needsHeader = false;
  private pending: string[] = [];
  private waiters: Waiter[] = [];
  private inFlight = false;
  private syncFd: number | null = null;
  private failure: Error | null = null;
  private readonly started = new Date().toISOString();

  private constructor(private readonly options: JournalWriterOptions) {}

  /** Opens the journal: repairs a torn tail, finds the last seq, and continues after it. */
  static async open(options: JournalWriterOptions): Promise<JournalWriter> {
    const writer = new JournalWriter(options);
    await writer.init();
    return writer;
  }

  get lastSeq(): number {
    return this.seq;
  }

  private async init(): Promise<void> {
    const { file, maxSize, compress } = this.options;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const repaired = repairTornTail(file);
    if (repaired > 0) this.options.warn?.(`journal ${file}: removed a torn last line (${repaired} bytes, never acknowledged)`);
    const saved = readCheckpoint(file)?.lastSeq;
    this.seq = Math.max(saved ?? (await lastSeqOfJournal(file)), lastSeqOfFile(file));
    const size = fs.existsSync(file) ? fs.statSync(file).size : 0;
    // An empty file, or one that rotating-file-stream rotates at open, starts with the next chunk.
    this.needsHeader = size === 0 || size >= maxSize;
    this.size = size >= maxSize ? 0 : size;
    const base = path.basename(file);
    this.stream = createStream((time: Date | number | null, index?: number) => (time === null ? base : rotatedName(base, new Date(time), index ?? 1, compress)), {
      path: path.dirname(file) + path.sep,
      size: `${maxSize}B`,
      ...(compress ? { compress: 'gzip' as const } : {}),
    });
    this.stream.on('error', (error: Error) => this.fail(error));
    await new Promise<void>((resolve) => this.stream.once('open', () => resolve()));
    if (this.options.fsync) this.syncFd = fs.openSync(file, 'a');
  }

  /**
   * Appends an entry and gives its seq at once; `written` settles when the
   * line is handed to the operating system (and synced, with fsync).
   */
  append(entry: NewEntry): { seq: number; written: Promise<void> } {
    if (this.failure) return { seq: -1, written: Promise.reject(this.failure) };
    const seq = ++this.seq;
    this.pending.push(encodeLine({ seq, ts: new Date().toISOString(), ...entry } as JournalEntry));
    const written = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.inFlight) this.flush();
    return { seq, written };
  }

  private header(): string {
    return encodeLine({ kind: 'header', format: JOURNAL_FORMAT, started: this.started, ...this.options.header });
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const text = (this.needsHeader ? this.header() : '') + this.pending.join('');
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    this.needsHeader = false;
    const chunk = Buffer.from(text, 'utf8');
    this.size += chunk.length;
    const rotates = this.size >= this.options.maxSize;
    this.inFlight = true;
    this.stream.write(chunk, (error) => {
      if (error) return this.settle(waiters, error);
      try {
        this.afterWrite(rotates);
        this.settle(waiters, null);
      } catch (syncError) {
        this.settle(waiters, syncError as Error);
      }
    });
  }

  /** After a write that made the stream rotate, the next chunk starts a new file. */
  private afterWrite(rotated: boolean): void {
    if (this.syncFd !== null) fs.fsyncSync(this.syncFd);
    if (!rotated) return;
    this.size = 0;
    this.needsHeader = true;
    writeCheckpoint(this.options.file, { lastSeq: this.seq });
    if (this.syncFd !== null) {
      fs.closeSync(this.syncFd);
      this.syncFd = fs.openSync(this.options.file, 'a');
      syncDirectory(path.dirname(this.options.file));
    }
  }

  private settle(waiters: Waiter[], error: Error | null): void {
    this.inFlight = false;
    if (error) this.fail(error);
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
    this.flush();
  }

  /** A journal that cannot be written stops every later write: nothing may commit unjournaled. */
  private fail(error: Error): void {
    this.failure ??= error;
  }

  async close(): Promise<void> {
    while (this.inFlight || this.pending.length > 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => this.stream.end(() => resolve()));
    if (this.syncFd !== null) fs.closeSync(this.syncFd);
    writeCheckpoint(this.options.file, { lastSeq: this.seq });
  }
}

function syncDirectory(directory: string): void {
  const fd = fs.openSync(directory, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
