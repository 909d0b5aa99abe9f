/**
 * Following a live journal: every entry from a start seq on, in seq order,
 * once each, across rotations and compression.
 *
 * Two ways of reading. Catching up reads the whole journal from the wanted
 * seq with the journal reader (rotated files, gzipped or not, and the active
 * file); it is what a follower does at start and whenever the active file is
 * no longer the one it was reading. Between rotations the follower reads only
 * the bytes appended to the active file since its last poll, and only whole
 * lines: a line without its newline is still being written, so it is left for
 * the next poll.
 *
 * Seq is gapless, so every surprise shows as a seq other than the one wanted:
 * a lower one was handled already and is skipped; a higher one means lines
 * went to a file this reader is not looking at (a rotation between two looks),
 * and catching up again finds them.
 */
import fs from 'node:fs/promises';
import { JournalError, readJournal } from '../journal/reader';
import { decodeLine, isHeader, JournalLineError, type JournalEntry } from '../journal/record';
import { lastSeqOfJournal } from '../journal/tail';

export interface FollowerHooks {
  /** Called for every entry from the start seq on, in seq order; the follower waits for it. */
  handle(entry: JournalEntry): Promise<void>;
  /** The next wanted seq moved back (the writer withdrew lines the follower had read). */
  rewound(next: number): void;
  warn(message: string): void;
}

interface ActiveFile {
  dev: number;
  ino: number;
  /** Bytes of whole lines read so far. */
  offset: number;
}

type ReadOutcome = 'caught-up' | 'switch';

/** How many times a catch-up is retried when a file vanishes under it (rotation and compression rename and remove files). */
const CATCH_UP_TRIES = 5;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function identity(file: string): Promise<{ dev: number; ino: number; size: number } | undefined> {
  try {
    const stat = await fs.stat(file);
    return { dev: stat.dev, ino: stat.ino, size: stat.size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export class Follower {
  private active: ActiveFile | null = null;
  private caughtUpOnce = false;

  constructor(
    private readonly logFile: string,
    private nextSeq: number,
    private readonly hooks: FollowerHooks,
    private readonly retryPauseMs: number,
  ) {}

  /** The first seq not handled yet. */
  get next(): number {
    return this.nextSeq;
  }

  /**
   * Handles every whole entry there is now. False when the active file
   * changed again under it before it got to the end (a busy writer): call again.
   */
  async poll(): Promise<boolean> {
    for (let round = 0; round < 3; round++) {
      if (this.active === null) await this.catchUp();
      if ((await this.readActive()) === 'caught-up') return true;
      this.active = null;
    }
    return false;
  }

  private async catchUp(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      // Taken before the read: should a rotation come in between, the tail read sees a higher seq and comes back here.
      const before = await identity(this.logFile);
      try {
        await this.catchUpOnce();
        this.active = before === undefined ? null : { dev: before.dev, ino: before.ino, offset: 0 };
        this.caughtUpOnce = true;
        return;
      } catch (err) {
        if (!(err instanceof JournalError) || attempt >= CATCH_UP_TRIES) throw err;
        // A journal missing at start is a wrong -log-file, not a race.
        if (err.kind === 'missing' && !this.caughtUpOnce) throw err;
        await pause(this.retryPauseMs);
      }
    }
  }

  private async catchUpOnce(): Promise<void> {
    const contents = await readJournal(this.logFile, { fromSeq: this.nextSeq });
    const first = contents.entries[0];
    if (first !== undefined && first.seq > this.nextSeq) {
      if (contents.firstSeq === null || contents.firstSeq <= this.nextSeq) {
        throw new JournalError('gap', `seq ${this.nextSeq} was not found though the journal starts before it`);
      }
      this.hooks.warn(
        `seq ${this.nextSeq}–${first.seq - 1} are no longer in the journal (retention removed them); going on from seq ${first.seq}`,
      );
      this.nextSeq = first.seq;
    }
    for (const entry of contents.entries) await this.take(entry);
  }

  private async take(entry: JournalEntry): Promise<void> {
    await this.hooks.handle(entry);
    this.nextSeq = entry.seq + 1;
  }

  /** The whole lines appended to the active file since the last look. */
  private async readActive(): Promise<ReadOutcome> {
    const active = this.active;
    if (active === null) return 'caught-up'; // no active file yet: the writer is between the two renames of a rotation
    const now = await identity(this.logFile);
    if (now === undefined) return 'caught-up';
    if (now.dev !== active.dev || now.ino !== active.ino) return 'switch';
    if (now.size < active.offset) return this.shrunk();
    if (now.size === active.offset) return 'caught-up';
    const bytes = await this.readRange(active.offset, now.size);
    // Split on newline bytes, so that the offset counts bytes exactly whatever the text holds.
    const base = active.offset;
    for (let start = 0; ;) {
      const end = bytes.indexOf(10, start);
      if (end === -1) return 'caught-up';
      const outcome = await this.takeLine(bytes.subarray(start, end).toString('utf8'), base + start);
      if (outcome === 'switch') return 'switch';
      start = end + 1;
      active.offset = base + start;
    }
  }

  private async readRange(from: number, to: number): Promise<Buffer> {
    const handle = await fs.open(this.logFile, 'r');
    try {
      const buffer = Buffer.alloc(to - from);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  private async takeLine(text: string, at: number): Promise<'ok' | 'switch'> {
    let line;
    try {
      line = decodeLine(text);
    } catch (err) {
      if (!(err instanceof JournalLineError)) throw err;
      throw new JournalError('corrupt', `the line at byte ${at} is damaged (${err.message})`, this.logFile);
    }
    if (isHeader(line) || line.seq < this.nextSeq) return 'ok';
    if (line.seq > this.nextSeq) return 'switch';
    await this.take(line);
    return 'ok';
  }

  /**
   * The writer cuts back lines whose write failed (a full disk) and gives their
   * seqs to the next entries. Lines already handled cannot be taken back; the
   * follower goes back to the first seq no longer there, so that the entries
   * written under those seqs are handled too.
   */
  private async shrunk(): Promise<ReadOutcome> {
    const last = await lastSeqOfJournal(this.logFile);
    if (last + 1 < this.nextSeq) {
      this.hooks.warn(
        `the journal was cut back to seq ${last} (a write failed after this follower read it): seq ${last + 1}–${this.nextSeq - 1} were handled but withdrawn; handling what is written under those seqs again`,
      );
      this.nextSeq = last + 1;
      this.hooks.rewound(this.nextSeq);
    }
    return 'switch';
  }
}
