/**
 * The free space of the data directory's disk, against -min-free-disk-mb:
 * below it, writes of tokens that are not admins are refused
 * (../bus/middleware/disk-headroom.ts), so that what is left stays for the
 * journal (its own entries, the refusals among them, are never refused here)
 * and for an admin's cleanup. Without it, one class filling the disk made
 * every write on the server fail, the journal's included.
 *
 * statfs is asked at most once per `maxAgeMs` (a request in between reads
 * the last answer): a write's check costs a comparison, not a system call.
 */
import fs from 'node:fs';
import { EngineError } from '../errors';
import { systemClock, type Clock } from '../clock';

const MiB = 1024 * 1024;

/** Free bytes of the disk that holds `dir`, for an unprivileged writer (bavail: the root reserve does not count). */
export type FreeSpace = (dir: string) => Promise<number>;

export const statfsFreeSpace: FreeSpace = async (dir) => {
  const stats = await fs.promises.statfs(dir);
  return stats.bavail * stats.bsize;
};

export interface DiskHeadroomOptions {
  readonly dir: string;
  /** -min-free-disk-mb; 0 checks nothing. */
  readonly minFreeMb: number;
  readonly clock?: Clock;
  readonly freeSpace?: FreeSpace;
  /** How long one statfs answer is used. @default 1000 */
  readonly maxAgeMs?: number;
}

export class DiskHeadroom {
  private readonly clock: Clock;
  private readonly freeSpace: FreeSpace;
  private readonly maxAgeMs: number;
  private last: { readAt: number; free: number } | null = null;
  private reading: Promise<number> | null = null;

  constructor(private readonly options: DiskHeadroomOptions) {
    this.clock = options.clock ?? systemClock;
    this.freeSpace = options.freeSpace ?? statfsFreeSpace;
    this.maxAgeMs = options.maxAgeMs ?? 1000;
  }

  get enabled(): boolean {
    return this.options.minFreeMb > 0;
  }

  /** Throws DISK_HEADROOM when the disk has less free than -min-free-disk-mb. */
  async assertRoom(): Promise<void> {
    if (!this.enabled) return;
    const free = await this.free();
    if (free >= this.options.minFreeMb * MiB) return;
    throw new EngineError(
      'DISK_HEADROOM',
      { free: Math.floor(free / MiB), min: this.options.minFreeMb },
      { retryAfter: 30 },
    );
  }

  /** Free bytes, as read at most maxAgeMs ago; a disk whose space cannot be read counts as roomy (nothing to refuse on). */
  private async free(): Promise<number> {
    const now = this.clock.now();
    if (this.last !== null && now - this.last.readAt < this.maxAgeMs) return this.last.free;
    this.reading ??= this.freeSpace(this.options.dir)
      .catch(() => Infinity)
      .then((free) => {
        this.last = { readAt: this.clock.now(), free };
        return free;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
