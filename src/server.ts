/**
 * A running sqlscribe: the HTTP server, its journal, its command bus and its
 * engine, started and stopped together. It listens at once, answers 503 while
 * crash recovery runs, then serves.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { useWal } from './engine/connection-pool';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { composeServices } from './compose';
import { Metrics } from './http/metrics';
import { BoundedReadHost } from './engine/host/bounded-read-host';
import { ProcessEngineHost } from './engine/host/process-engine-host';
import { trackConnections } from './http/connection-limit';
import { bodyDeadline } from './http/body-timeout';
import { answerParseErrors } from './http/parse-errors';
import { Readiness } from './http/readiness';
import { openJournal } from './journal-setup';
import { JournalIndex } from '../journal/journal-index';
import type { Config } from './options';
import { recoverDatabases, repairDatabase } from './recovery';
import { databaseFileIn } from './database-names';
import { writeCheckpoint } from '../journal/checkpoint';
import { AppliedCheckpoints } from './applied-checkpoints';
import { schedulerFor } from './snapshots/snapshot-scheduler';
import { takeUpgradeRound } from './snapshots/upgrade-round';
import { engineVersions } from './engine/engine-versions';
import type { SnapshotManifest } from './snapshots/manifest';
import { lockInstance } from './instance-lock';
import { checkpointAtShutdown } from './shutdown-checkpoint';
import { ServerRoleState } from './services/server-role';
import { Replication } from './replication/replication';
import type { Journal } from '../journal/journal';
import type { EngineHost } from './engine/protocol';

/** The replication of -journal-nats or -follow, or null: the journal stays local. */
function replicationFor(config: Config, journal: Journal, role: ServerRoleState, engine: EngineHost, log: (message: string) => void): Replication | null {
  if (config.replication === null || config.logFile === null) return null;
  return new Replication({
    config,
    replication: config.replication,
    journal,
    journalFile: config.logFile,
    role,
    primaryAppliedSeq: () => journal.lastSeq,
    fileOf: databaseFileIn(config),
    release: (file) => engine.closeDatabase(file),
    log,
  });
}

export interface RunningServer {
  readonly url: string;
  /** Settles when the databases are in line with the journal and every endpoint serves. */
  readonly ready: Promise<{ applied: number }>;
  close(): Promise<void>;
}

function listen(server: http.Server, config: Config): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${host}:${address.port}`);
    });
  });
}

/** The single database exists and is in WAL mode from the start, before several engine processes open it at once. */
function prepareSingleDatabase(file: string): void {
  const db = new Database(file);
  try {
    useWal(db);
  } finally {
    db.close();
  }
}

/**
 * A client that sends its request slowly, or never (slowloris), holds one of
 * the -max-connections slots only this long: Node answers 408 and closes.
 * Node looks for expired requests every connectionsCheckingInterval, so that
 * is kept short, or a slot would stay taken up to 30 s longer. The body's own
 * limit, counted from the end of the headers, is bodyDeadline's; Node's
 * requestTimeout (from the start of the request) can only be later.
 */
function connectionTimeouts(config: Config): http.ServerOptions {
  return {
    headersTimeout: config.headerTimeoutMs,
    requestTimeout: config.headerTimeoutMs + config.bodyTimeoutMs,
    keepAliveTimeout: config.idleTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.headerTimeoutMs),
  };
}

export async function startServer(config: Config): Promise<RunningServer> {
  // Before anything reads or writes the directory or the journal: a second server stops here.
  const lock = lockInstance(config);
  fs.mkdirSync(config.dir, { recursive: true });
  // The single database exists from the start, so that /dbs lists a real file.
  if (config.dbFile !== null) prepareSingleDatabase(config.dbFile);
  const metrics = new Metrics();
  const journal = await openJournal(config, metrics);
  metrics.journalOpenedAt(journal.lastSeq);
  const logFile = config.logFile;
  const repair = logFile === null ? async () => undefined : (db: string) => repairDatabase(config, logFile, db);
  const log = (message: string): void => void process.stderr.write(`sqlscribe: ${message}\n`);
  // Subscribed before anything is appended; it catches up with the journal's files in the background.
  const index = config.historyIndex && logFile !== null && journal.enabled ? JournalIndex.open(logFile, journal, log) : null;
  const engine = new BoundedReadHost(new ProcessEngineHost({ queryTimeoutMs: config.queryTimeoutMs, clientShare: config.clientShare }));
  const role = new ServerRoleState(config.replication === null ? 'standalone' : 'primary');
  const { bus, writePath, feed, tokens, copyGate, refusals } = composeServices(config, engine, journal, { repair, log, observer: metrics }, role, index);
  const replication = replicationFor(config, journal, role, engine, log);
  // A replica's databases are settled as far as its follower applied them; elsewhere the write path knows.
  const settled = (): number => replication?.settledThrough() ?? writePath.settledThrough();
  let checkpoints: AppliedCheckpoints | undefined;
  const readiness = new Readiness();
  if (replication !== null) metrics.replicationFrom(() => replication.status());
  const { koa } = createApp(config, bus, readiness, metrics, feed, tokens, replication, refusals);
  const handle = koa.callback();
  // Koa answers every error itself (errorHandler): the promise is only awaited there.
  const server = http.createServer(connectionTimeouts(config), (req, res) => void handle(req, res));
  trackConnections(server, config.maxConnections);
  bodyDeadline(server, config.bodyTimeoutMs);
  answerParseErrors(server);
  const url = await listen(server, config);
  replication?.listening(url);
  // A primary's rounds go to JetStream too, for new replicas to start from.
  const afterRound = replication === null ? undefined : (manifest: SnapshotManifest) => replication.roundTaken(manifest);
  const snapshots = schedulerFor(config, () => journal.lastSeq, settled, (work) => copyGate.snapshotting(work), afterRound);
  const ready = (async () => {
    await replication?.beforeRecovery();
    const result = logFile === null || journal.level === 'none' ? { applied: 0, unrecovered: [] } : await recoverDatabases(config, logFile);
    for (const { db, seq, reason } of result.unrecovered) {
      writePath.markBehind(db, seq);
      log(`${db} could not be brought in line with the journal at seq ${seq} (${reason}): its writes are refused until a repair succeeds; reads go on`);
    }
    if (logFile !== null && journal.level !== 'none') checkpoints = new AppliedCheckpoints(logFile, settled, log);
    await replication?.afterRecovery();
    const change = journal.engineChangedAtOpen;
    // A replica's rounds come from its primary; it takes none of its own.
    if (change !== null && logFile !== null && config.snapshotDir !== null && journal.recordsWrites && (role.role === 'standalone' || role.role === 'primary')) {
      const sources = { dbFile: config.dbFile, dataDir: config.dir, logFile, snapshotDir: config.snapshotDir };
      const manifest = await takeUpgradeRound({ sources, change, now: engineVersions(), settledThrough: settled, exclusive: (work) => copyGate.snapshotting(work), log });
      if (manifest !== undefined) await afterRound?.(manifest);
    }
    readiness.ready = true;
    snapshots?.start();
    return result;
  })();
  return {
    url,
    ready,
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Followers of GET /journal would hold the server open for ever.
        feed.close();
        server.closeIdleConnections();
      });
      checkpoints?.stop();
      await snapshots?.close();
      // No entry arrives from the stream, nor leaves for it, once the databases are being closed.
      await replication?.close();
      await bus.close();
      // The engine processes are gone: only now can every write-ahead log be emptied.
      checkpointAtShutdown(config, (message) => process.stderr.write(`sqlscribe: ${message}\n`));
      await journal.close();
      await index?.close();
      // Stopped cleanly: every entry written is applied (or voided), so the next start reads nothing old.
      if (logFile !== null && journal.level !== 'none') writeCheckpoint(logFile, { appliedThrough: settled() });
      lock.release();
    },
  };
}
