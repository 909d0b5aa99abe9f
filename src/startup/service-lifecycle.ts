/**
 * The order in which a composed server's parts start and stop, apart from
 * HTTP: what compose.ts built is brought in line with the journal once the
 * server listens (it answers 503 meanwhile), and stopped in the one order
 * that leaves nothing unwritten. Kept beside the composition root so that
 * server.ts only wires HTTP.
 */
import type { Journal } from '../../journal/journal';
import type { JournalIndex } from '../../journal/index/journal-index';
import { writeCheckpoint } from '../../journal/checkpoint';
import { AppliedCheckpoints } from './applied-checkpoints';
import type { CommandBus } from '../bus/command-bus';
import { engineVersions } from '../engine/engine-versions';
import type { Readiness } from '../http/bookkeeping/readiness';
import type { InstanceLock } from './instance-lock';
import type { Config } from '../config/options';
import { recoverDatabases } from './recovery';
import type { Replication } from '../replication/replication';
import type { CopyGate } from '../services/databases/copy-gate';
import type { ServerRoleState } from '../services/server-role';
import type { WritePath } from '../services/writes/write-path';
import { checkpointAtShutdown } from './shutdown-checkpoint';
import type { SnapshotManifest } from '../snapshots/manifest';
import type { SnapshotScheduler } from '../snapshots/snapshot-scheduler';
import { takeUpgradeRound } from '../snapshots/upgrade-round';

/** The parts whose start and stop are ordered here. */
export interface LifecycleParts {
  readonly config: Config;
  readonly lock: InstanceLock;
  readonly journal: Journal;
  readonly index: JournalIndex | null;
  readonly writePath: WritePath;
  readonly bus: CommandBus;
  readonly role: ServerRoleState;
  readonly replication: Replication | null;
  readonly copyGate: CopyGate;
  readonly readiness: Readiness;
  readonly snapshots: SnapshotScheduler | null;
  /** After a snapshot round: a primary's rounds go to JetStream too, for new replicas to start from. */
  readonly afterRound: ((manifest: SnapshotManifest) => Promise<void>) | undefined;
  /** How far the databases are settled (applied or voided). */
  readonly settled: () => number;
  readonly log: (message: string) => void;
}

export class ServiceLifecycle {
  private checkpoints: AppliedCheckpoints | undefined;

  constructor(private readonly parts: LifecycleParts) {}

  /** Once the server listens at `url`: recovery, the upgrade round if the engine changed, then every endpoint serves. */
  async start(url: string): Promise<{ applied: number }> {
    const { config, journal, writePath, replication, readiness, snapshots, settled, log } = this.parts;
    replication?.listening(url);
    const logFile = config.logFile;
    await replication?.beforeRecovery();
    const result =
      logFile === null || journal.level === 'none'
        ? { applied: 0, unrecovered: [] }
        : await recoverDatabases(config, logFile);
    for (const { db, seq, reason } of result.unrecovered) {
      writePath.markBehind(db, seq);
      log(
        `${db} could not be brought in line with the journal at seq ${seq} (${reason}): its writes are refused until a repair succeeds; reads go on`,
      );
    }
    if (logFile !== null && journal.level !== 'none') this.checkpoints = new AppliedCheckpoints(logFile, settled, log);
    await replication?.afterRecovery();
    await this.upgradeRound();
    readiness.ready = true;
    snapshots?.start();
    return result;
  }

  /** A new engine version takes a snapshot round at once; a replica's rounds come from its primary, so it takes none of its own. */
  private async upgradeRound(): Promise<void> {
    const { config, journal, role, copyGate, afterRound, settled, log } = this.parts;
    const change = journal.engineChangedAtOpen;
    const logFile = config.logFile;
    if (change === null || logFile === null || config.snapshotDir === null || !journal.recordsWrites) return;
    if (role.role !== 'standalone' && role.role !== 'primary') return;
    const sources = { dbFile: config.dbFile, dataDir: config.dir, logFile, snapshotDir: config.snapshotDir };
    const manifest = await takeUpgradeRound({
      sources,
      change,
      now: engineVersions(),
      settledThrough: settled,
      exclusive: (work) => copyGate.snapshotting(work),
      log,
    });
    if (manifest !== undefined) await afterRound?.(manifest);
  }

  /** Everything but HTTP, which server.ts has closed first. */
  async close(): Promise<void> {
    const { config, journal, index, bus, replication, snapshots, settled, lock } = this.parts;
    this.checkpoints?.stop();
    await snapshots?.close();
    // No entry arrives from the stream, nor leaves for it, once the databases are being closed.
    await replication?.close();
    await bus.close();
    // The engine processes are gone: only now can every write-ahead log be emptied.
    checkpointAtShutdown(config, (message) => process.stderr.write(`sqlscribe: ${message}\n`));
    await journal.close();
    await index?.close();
    // Stopped cleanly: every entry written is applied (or voided), so the next start reads nothing old.
    if (config.logFile !== null && journal.level !== 'none')
      writeCheckpoint(config.logFile, { appliedThrough: settled() });
    lock.release();
  }
}
