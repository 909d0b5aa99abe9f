/**
 * The snapshot round of the first start on a new engine. The journal's older
 * files were written by another better-sqlite3, SQLite or time zone, and
 * replay refuses to run their entries on this one (their SQL could compute
 * other values). A round taken at once, after crash recovery applied them,
 * holds everything they did: restoring any point from then on starts from it
 * and runs only entries this engine wrote. Points before it still need the
 * old engine, or replay's -force.
 */
import type { EngineChange } from '../../journal/journal';
import type { SnapshotManifest } from './manifest';
import { takeSnapshotRound, type RoundSources } from './snapshot-round';

export interface UpgradeRoundOptions {
  readonly sources: RoundSources;
  readonly change: EngineChange;
  /** The now-engine's fields, for the log line. */
  readonly now: { betterSqlite3: string; sqlite: string; tz: string };
  settledThrough(): number;
  /** Runs the round where no database is being copied from a template. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  log(message: string): void;
}

function describe(engine: { betterSqlite3: string; sqlite: string; tz: string }): string {
  return `better-sqlite3 ${engine.betterSqlite3}, SQLite ${engine.sqlite}, time zone ${engine.tz}`;
}

/** Takes the round; a failure is logged, never thrown: the server serves anyway, and the scheduler's rounds (if any) follow. */
export async function takeUpgradeRound(options: UpgradeRoundOptions): Promise<SnapshotManifest | undefined> {
  const { change } = options;
  const log = (message: string): void => options.log(message);
  log(
    `the journal through seq ${change.lastSeqBefore} was written by ${describe(change.previous)}; this server runs ${describe(options.now)}: taking a snapshot round so that restoring any later point needs only entries of this engine`,
  );
  try {
    const settled = options.settledThrough();
    const manifest = await options.exclusive(() => takeSnapshotRound(options.sources, settled));
    if (settled < change.lastSeqBefore) {
      log(
        `upgrade snapshot round: only seq ${settled} is applied everywhere (a database is behind its journal), so entries up to seq ${change.lastSeqBefore} may still be needed by a restore`,
      );
    } else {
      log(
        `upgrade snapshot round ${manifest === undefined ? 'not needed: the newest round already holds' : 'holds'} every entry through seq ${settled}`,
      );
    }
    return manifest;
  } catch (error) {
    log(
      `upgrade snapshot round failed: ${error instanceof Error ? error.message : String(error)}; restoring a point after the upgrade needs -force until a round is taken`,
    );
    return undefined;
  }
}
