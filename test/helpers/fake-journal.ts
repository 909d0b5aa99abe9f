/** A journal for unit tests of the write path: appends settle when the test says so, or fail when told to. */
import type { JournalPort } from '../../src/services/writes/write-path';
import type { JournalEvent } from '../../journal/journal';
import type { NewEntry } from '../../journal/writer';

interface Appended {
  seq: number;
  entry: NewEntry;
  /** Written: what a reader of the journal would see. */
  durable: boolean;
  settle(error?: Error): void;
}

/** A journal whose appends settle when the test says so, or fail when told to. */
export class FakeJournal implements JournalPort {
  lastSeq = 0;
  private next = 1;
  readonly appended: Appended[] = [];
  /** Errors for the next appends, in order (undefined: that append succeeds). */
  failures: Array<Error | undefined> = [];
  /** Settle every append at once (default) or leave it to the test. */
  autoSettle = true;
  recordsReads = false;

  records(event: JournalEvent, ok: boolean): boolean {
    return event !== 'read' || this.recordsReads || !ok;
  }

  append(_event: JournalEvent, entry: NewEntry): { seq: number | null; written: Promise<void> } {
    const seq = this.next++;
    const failure = this.failures.shift();
    const appended: Appended = { seq, entry, durable: false, settle: () => undefined };
    const written = new Promise<void>((resolve, reject) => {
      appended.settle = (error) => {
        if (error) {
          this.next = this.lastSeq + 1;
          return reject(error);
        }
        this.lastSeq = Math.max(this.lastSeq, seq);
        appended.durable = true;
        resolve();
      };
    });
    written.catch(() => undefined);
    this.appended.push(appended);
    if (this.autoSettle) appended.settle(failure);
    return { seq, written };
  }

  /** Entries written together: one failure (the next in `failures`) takes them all. */
  appendAll(items: ReadonlyArray<{ event: JournalEvent; entry: NewEntry }>): {
    seqs: number[];
    written: Promise<void>;
  } {
    const failure = this.failures.shift();
    const [auto, later] = [this.autoSettle, this.failures];
    this.autoSettle = false;
    this.failures = [];
    const appended = items.map(({ event, entry }) => this.append(event, entry));
    this.autoSettle = auto;
    this.failures = later;
    const batch = this.appended.slice(-items.length);
    const written = Promise.all(appended.map((a) => a.written)).then(() => undefined);
    written.catch(() => undefined);
    if (auto) for (const a of batch) a.settle(failure);
    return { seqs: appended.map((a) => a.seq as number), written };
  }

  /** The kinds of the entries written, in order. */
  kinds(): string[] {
    return this.appended.filter((a) => a.durable).map((a) => a.entry.kind);
  }
}

export const enospc = (): Error => Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
