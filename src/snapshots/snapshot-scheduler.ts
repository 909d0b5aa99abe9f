/**
 * Runs snapshot rounds, then retention, every N journal entries or every so
 * often. It lives beside the request path and never in it: a round that fails
 * is logged and tried again later, and nothing it does can stop the server.
 */
import type { Config, LogRetain, SnapshotEvery } from '../config/options';
import { listRounds, type SnapshotManifest } from './manifest';
import { applyRetention } from './retention';
import { takeSnapshotRound, type RoundSources } from './snapshot-round';

export interface SchedulerOptions {
  readonly sources: RoundSources;
  readonly every: SnapshotEvery;
  readonly retain: LogRetain | null;
  /** The journal's last seq now. */
  lastSeq(): number;
  /** Every entry up to this seq is applied or changes nothing (the write path's settled seq). */
  settledThrough(): number;
  log(message: string): void;
  /** Runs a round where no database is being copied from a template (copy-gate.ts). */
  exclusive?<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Told of each new round before retention runs (so its copies are still
   * there): a replication primary puts it in JetStream. It must not reject.
   */
  afterRound?(manifest: SnapshotManifest): Promise<void>;
}

/** How often a count is checked: cheap, and short enough that a round follows its count closely. */
const POLL_MS = 200;
/** After a failure, how long before the next try (a full disk is not fixed in 200 ms). */
const RETRY_MS = 5_000;

export class SnapshotScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The journal's last seq when the latest round started. */
  private roundAt: number;
  private retryAfter = 0;

  constructor(private readonly options: SchedulerOptions) {
    this.roundAt = listRounds(options.sources.snapshotDir).at(-1)?.base ?? 0;
  }

  start(): void {
    const interval = 'ms' in this.options.every ? this.options.every.ms : POLL_MS;
    this.timer = setInterval(() => this.tick(), interval);
    this.timer.unref();
  }

  private due(): boolean {
    const grown = this.options.lastSeq() - this.roundAt;
    if ('entries' in this.options.every) return grown >= this.options.every.entries;
    return grown > 0;
  }

  private tick(): void {
    if (this.running !== undefined || Date.now() < this.retryAfter || !this.due()) return;
    this.running = this.round().finally(() => (this.running = undefined));
  }

  /** One round and its retention; never rejects. */
  private async round(): Promise<void> {
    const last = this.options.lastSeq();
    try {
      const take = () => takeSnapshotRound(this.options.sources, this.options.settledThrough());
      const manifest = await (this.options.exclusive === undefined ? take() : this.options.exclusive(take));
      this.roundAt = last;
      if (manifest !== undefined)
        this.options.log(
          `snapshot through seq ${manifest.through} (journal needed from seq ${manifest.base + 1}), ${manifest.databases.length} databases`,
        );
      if (manifest !== undefined) await this.options.afterRound?.(manifest);
      const removed = await applyRetention({
        logFile: this.options.sources.logFile,
        snapshotDir: this.options.sources.snapshotDir,
        retain: this.options.retain,
        now: Date.now(),
      });
      if (removed.removedFiles.length + removed.removedRounds.length > 0) {
        this.options.log(
          `retention removed ${removed.removedFiles.length} journal files and ${removed.removedRounds.length} snapshot rounds`,
        );
      }
    } catch (error) {
      this.retryAfter = Date.now() + RETRY_MS;
      this.options.log(
        `snapshot failed, retrying in ${RETRY_MS / 1000} s: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Stops the timer and waits for a round under way, so the server closes no database under it. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }
}

/** The scheduler the flags ask for, or null when snapshots are off. */
export function schedulerFor(
  config: Config,
  lastSeq: () => number,
  settledThrough: () => number,
  exclusive?: SchedulerOptions['exclusive'],
  afterRound?: SchedulerOptions['afterRound'],
): SnapshotScheduler | null {
  if (config.snapshotEvery === null || config.logFile === null || config.snapshotDir === null) return null;
  return new SnapshotScheduler({
    sources: { dbFile: config.dbFile, dataDir: config.dir, logFile: config.logFile, snapshotDir: config.snapshotDir },
    every: config.snapshotEvery,
    retain: config.logRetain,
    lastSeq,
    settledThrough,
    ...(exclusive === undefined ? {} : { exclusive }),
    ...(afterRound === undefined ? {} : { afterRound }),
    log: (message) => process.stderr.write(`sqlscribe: ${message}\n`),
  });
}
