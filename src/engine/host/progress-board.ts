/**
 * Which statement an engine process is running, and since when, without a
 * message per statement (in a 100-statement batch the messages cost
 * more than the statements). The engine process writes a 16-byte record at
 * offset 0 of a file it shares with its parent (a temporary file unlinked at
 * once, handed over as fd 4): call id, statement index, start time. The
 * parent reads it only when a deadline comes, or when the process died.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The fd of the board in the engine process (stdio slot 4, after the IPC channel). */
export const PROGRESS_FD = 4;
const RECORD_BYTES = 16;

export interface Progress {
  call: number;
  statement: number;
  /** process.hrtime (monotonic, the same clock in every process of the machine), in microseconds. */
  startedUs: number;
}

export function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The parent's side: one board per engine process. */
export class ProgressBoard {
  readonly fd: number;
  private readonly record = Buffer.alloc(RECORD_BYTES);

  constructor() {
    const file = path.join(os.tmpdir(), `sqlscribe-progress-${process.pid}-${randomBytes(6).toString('hex')}`);
    this.fd = fs.openSync(file, 'w+', 0o600);
    fs.unlinkSync(file);
  }

  /** The last record the process wrote, if any. */
  read(): Progress | undefined {
    if (fs.readSync(this.fd, this.record, 0, RECORD_BYTES, 0) < RECORD_BYTES) return undefined;
    return {
      call: this.record.readUInt32LE(0),
      statement: this.record.readUInt32LE(4),
      startedUs: this.record.readDoubleLE(8),
    };
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * A brief statement (brief-inserts.ts) goes unrecorded while the last record,
 * or its call's start, is younger than this: the record then still says
 * when the statement running began, to within this, and a brief statement
 * is never the runaway it would name. A batch of a hundred such INSERTs
 * writes one record instead of a hundred.
 */
export const BRIEF_SKIP_US = 1000;

/** The engine process's side: `begin` when a call starts, `statement` before each of its statements after the first. */
export interface ProgressWriter {
  begin(call: number): void;
  statement(call: number, statement: number, brief: boolean): void;
}

export function progressWriter(fd = PROGRESS_FD): ProgressWriter {
  try {
    fs.fstatSync(fd);
  } catch {
    return { begin: () => undefined, statement: () => undefined };
  }
  const record = Buffer.alloc(RECORD_BYTES);
  /** When the last record was written, or the current call began. */
  let lastUs = 0;
  return {
    begin: () => {
      lastUs = nowUs();
    },
    statement: (call, statement, brief) => {
      const now = nowUs();
      if (brief && now - lastUs < BRIEF_SKIP_US) return;
      record.writeUInt32LE(call >>> 0, 0);
      record.writeUInt32LE(statement, 4);
      record.writeDoubleLE(now, 8);
      fs.writeSync(fd, record, 0, RECORD_BYTES, 0);
      lastUs = now;
    },
  };
}
