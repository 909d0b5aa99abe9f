/**
 * Keeps the checkpoint's `appliedThrough` close behind the journal while the
 * server runs, so that the start after a crash reads only the entries since
 * (start-up cost follows the tail, not the journal's length). It records only
 * what the write path says is settled: applied, voided, or needing nothing.
 * A stale value costs a longer start; a value too high would skip entries, so
 * it never guesses.
 */
import { writeCheckpoint } from '../../journal/checkpoint';

/** How often the checkpoint is brought up to date, when it moved. */
const INTERVAL_MS = 1000;

export class AppliedCheckpoints {
  private written = -1;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly journalFile: string,
    private readonly settledThrough: () => number,
    private readonly log: (message: string) => void,
  ) {
    this.timer = setInterval(() => this.update(), INTERVAL_MS);
    this.timer.unref();
  }

  update(): void {
    const through = this.settledThrough();
    if (through === this.written) return;
    try {
      writeCheckpoint(this.journalFile, { appliedThrough: through });
      this.written = through;
    } catch (error) {
      this.log(`could not update the journal checkpoint: ${(error as Error).message}`);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
