/**
 * The composition root: which service gets which dependency, the journal,
 * the engine, replication and the command bus's handlers and middleware, in
 * one place. Everything below HTTP is built here and nowhere else;
 * server.ts wires HTTP to what this returns and service-lifecycle.ts orders
 * its start and stop.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Journal } from '../../journal/journal';
import { indexFileOf, JournalIndex } from '../../journal/index/journal-index';
import { useWal } from '../engine/connection-pool';
import { BoundedReadHost } from '../engine/in-server/bounded-read-host';
import { ProcessEngineHost } from '../engine/host/process-engine-host';
import type { EngineHost } from '../engine/protocol';
import { Metrics } from '../http/metrics';
import { Readiness } from '../http/bookkeeping/readiness';
import { lockInstance } from './instance-lock';
import { openJournal } from './journal-setup';
import type { Config } from '../config/options';
import { repairDatabase } from './recovery';
import { databaseFileIn } from '../database-names';
import type { Replication } from '../replication/replication';
import { ServiceLifecycle } from './service-lifecycle';
import type { SnapshotManifest } from '../snapshots/manifest';
import { schedulerFor } from '../snapshots/snapshot-scheduler';
import { CommandBus, type Middleware } from '../bus/command-bus';
import { databaseHandlers } from '../bus/handlers/database-handlers';
import { execHandlers } from '../bus/handlers/exec-handlers';
import { importHandlers } from '../bus/handlers/import-handlers';
import { pilotHandlers } from '../bus/handlers/pilot-handlers';
import { sessionHandlers } from '../bus/handlers/session-handlers';
import { tokenHandlers } from '../bus/handlers/token-handlers';
import { authorize } from '../bus/middleware/authorize';
import { systemClock } from '../clock';
import { requiresTokens, servesJournalContents } from '../config/options';
import { TokenRegistry } from '../tokens/token-registry';
import { TokenStateFile } from '../tokens/token-state';
import { templateHandlers } from '../bus/handlers/template-handlers';
import { classHandlers } from '../bus/handlers/class-handlers';
import { historyHandlers } from '../bus/handlers/history-handlers';
import { History } from '../services/history';
import { ClassActivity } from '../services/class-activity';
import { Refusals } from '../services/refusals';
import { commandMetrics, type CommandObserver } from '../bus/middleware/command-metrics';
import { refuseStoppedCalls } from '../bus/middleware/stopped-calls';
import { writesOnPrimary } from '../bus/middleware/writes-on-primary';
import { ServerRoleState } from '../services/server-role';
import { BatchRunner } from '../services/writes/batch-runner';
import { CopyGate } from '../services/databases/copy-gate';
import { DatabaseCopies } from '../services/databases/database-copies';
import { DatabaseRestores } from '../services/databases/database-restores';
import { RestoreProcesses } from '../services/databases/restore-process';
import { RestoreSlots } from '../services/databases/restore-slots';
import { restoreHandlers } from '../bus/handlers/restore-handlers';
import { DatabaseDirectory } from '../services/databases/database-directory';
import { DatabaseLifecycle } from '../services/databases/database-lifecycle';
import { JournalFeed } from '../services/journal-feed';
import { DiskHeadroom } from '../services/disk-headroom';
import { refuseBelowHeadroom } from '../bus/middleware/disk-headroom';
import { WriteLocks } from '../services/writes/write-locks';
import { WritePath } from '../services/writes/write-path';
import { PilotService } from '../pilots/pilot-service';
import { PilotStore } from '../pilots/pilot-store';
import { SessionManager } from '../sessions/session-manager';
import { exerciseHandlers } from '../bus/handlers/exercise-handlers';
import { ExerciseStore } from '../exercises/exercise-store';
import { ExerciseChecker } from '../exercises/exercise-checker';
import { ExerciseProgress } from '../exercises/exercise-progress';
import { ExerciseService } from '../exercises/exercise-service';
import { ScratchCopies } from '../exercises/scratch-copies';

interface ServiceHooks {
  /** Brings one database back in line with the journal (it lacks durable entries that could not be voided). */
  repair(db: string): Promise<void>;
  /** Told of failures that reach no client. */
  log(message: string): void;
  /** Told of every command's type, outcome and duration. */
  observer: CommandObserver;
}

interface Services {
  readonly bus: CommandBus;
  /** The one owner of "durable before applied": the server asks it how far the databases are settled. */
  readonly writePath: WritePath;
  /** GET /journal's reader and followers; the server ends the followers before it stops. */
  readonly feed: JournalFeed;
  /** Whose token a request carries: the auth middleware asks it. */
  readonly tokens: TokenRegistry;
  /** Snapshot rounds run through it, so that no database is copied from a template during one. */
  readonly copyGate: CopyGate;
  /** The audit trace of refused requests: the request log hands them over. */
  readonly refusals: Refusals;
}

/** Why a server has no journal index: GET /dbs/{db}/history says it. */
function noIndexReason(config: Config, journal: Journal): string {
  return journal.enabled
    ? 'the journal index is off (-history-index=false)'
    : 'the server keeps no statement journal (-log-level none)';
}

function composeServices(
  config: Config,
  engine: EngineHost,
  journal: Journal,
  hooks: ServiceHooks,
  role: ServerRoleState,
  index: JournalIndex | null,
): Services {
  const { lockTimeoutMs, maxResultRows, maxResultBytes, maxDatabaseMb } = config;
  const directory = new DatabaseDirectory(config);
  const writePath = new WritePath(journal, hooks);
  const locks = new WriteLocks();
  const batches = new BatchRunner(engine, journal, writePath, locks, {
    lockTimeoutMs,
    maxResultRows,
    maxResultBytes,
    maxDatabaseMb,
  });
  const lifecycle = new DatabaseLifecycle(directory, engine, writePath, locks, lockTimeoutMs);
  const copyGate = new CopyGate();
  const copies = new DatabaseCopies(directory, engine, writePath, locks, lockTimeoutMs, copyGate, maxDatabaseMb);
  const restores = new DatabaseRestores({
    directory,
    engine,
    path: writePath,
    journal,
    locks,
    lockTimeoutMs,
    gate: copyGate,
    clock: () => systemClock.now(),
    // A restore rebuilds from a journal of every change (and the snapshot rounds beside it).
    source:
      config.logFile !== null && (config.logLevel === 'mod' || config.logLevel === 'all')
        ? { logFile: config.logFile, snapshotDir: config.snapshotDir }
        : null,
    index:
      index === null || config.logFile === null
        ? null
        : { file: indexFileOf(config.logFile), settle: () => index.settle() },
    scratchDir: path.join(config.logFile === null ? config.dir : path.dirname(config.logFile), 'restoring'),
    rebuilds: new RestoreProcesses(
      { timeoutMs: config.restoreTimeoutMs, memoryBytes: config.restoreMemoryBytes },
      (message) => hooks.log(message),
    ),
    slots: new RestoreSlots(),
  });
  const sessions = new SessionManager(engine, locks, writePath, {
    idleTimeoutMs: config.sessionTimeoutMs,
    lockTimeoutMs,
    maxResultRows,
    maxResultBytes,
    maxDatabaseMb,
  });
  const pilots = new PilotService(new PilotStore(directory, batches, lifecycle));
  // The tokens made through POST /tokens are kept beside the databases, only on a server that requires tokens.
  const tokens = new TokenRegistry({
    adminToken: config.token,
    fileTokens: config.fileTokens,
    state: requiresTokens(config) ? TokenStateFile.in(config.dir) : null,
  });

  // What a token holds across requests (its live feeds, its session) ends when it is revoked or expires.
  const feed = new JournalFeed(journal, config.logFile);
  tokens.onExpired((id) => {
    feed.endOwnedBy(id);
    void sessions.endOwnedBy(id);
  });

  const activity = new ClassActivity(journal, config.logFile);
  // Answers run on copies of their templates in a directory of the server's own, beside the restores' (scratch-copies.ts).
  const scratch = new ScratchCopies(
    path.join(config.logFile === null ? config.dir : path.dirname(config.logFile), 'checking'),
    engine,
    (message) => hooks.log(message),
  );
  const exercises = new ExerciseService({
    store: new ExerciseStore(directory, engine, batches, lifecycle),
    checker: new ExerciseChecker(directory, engine, scratch, {
      maxStatements: config.maxStatements,
      maxResultRows,
      maxResultBytes,
      maxDatabaseMb,
    }),
    progress: new ExerciseProgress(journal, config.logFile, systemClock),
    journal: {
      note: (event, entry) => writePath.note(event, entry),
      records: (event, ok) => journal.records(event, ok),
    },
    tokens,
    engine,
    clock: systemClock,
    solutionsWithoutTokens: servesJournalContents(config),
  });
  const handlers = {
    ...databaseHandlers({ directory, lifecycle, engine }),
    ...execHandlers({ directory, lifecycle, batches, sessions, writePath }),
    ...importHandlers({ directory, engine, batches }),
    ...sessionHandlers(directory, sessions),
    ...templateHandlers(directory, copies),
    ...restoreHandlers(directory, restores, servesJournalContents(config)),
    ...classHandlers({ directory, activity, engine, tokens }),
    ...historyHandlers({ directory, history: new History(index, noIndexReason(config, journal)) }),
    ...pilotHandlers(pilots),
    ...exerciseHandlers(exercises),
    ...tokenHandlers({
      registry: tokens,
      directory,
      lifecycle,
      copies,
      clock: systemClock,
      revoked: async (id) => {
        feed.endOwnedBy(id);
        await sessions.endOwnedBy(id);
      },
    }),
  };
  // Outermost first: every command is counted, even one refused because its request had already stopped.
  // A command its token may not send is refused before it waits for anything.
  // A replica refuses what writes before checking anything else of it: the client must go to the primary.
  const middleware: Middleware[] = [
    commandMetrics(hooks.observer),
    refuseStoppedCalls,
    authorize(directory, { restoreRole: config.restoreRole }),
    writesOnPrimary(role),
    // Last: a command refused for its role or on a replica hears that, not the disk.
    refuseBelowHeadroom(new DiskHeadroom({ dir: config.dir, minFreeMb: config.minFreeDiskMb })),
  ];
  const close = async (): Promise<void> => {
    restores.close();
    await sessions.shutdown();
    await engine.close();
  };
  const refusals = new Refusals(writePath, activity);
  return { bus: new CommandBus(handlers, middleware, close), writePath, feed, tokens, copyGate, refusals };
}

/** Everything a running server is made of but its HTTP side. */
export interface Composition {
  /** The counters /metrics shows; the HTTP side tallies requests into it. */
  readonly metrics: Metrics;
  /** False (503) until recovery is done. */
  readonly readiness: Readiness;
  readonly bus: CommandBus;
  readonly feed: JournalFeed;
  readonly tokens: TokenRegistry;
  readonly refusals: Refusals;
  readonly replication: Replication | null;
  /** Once the server listens at `url`: recovery, then every endpoint serves. */
  start(url: string): Promise<{ applied: number }>;
  /** Stops everything but HTTP (server.ts stops that first). */
  close(): Promise<void>;
}

/**
 * The replication of -journal-nats or -follow, or null: the journal stays local. Its modules, the
 * NATS client among them, load only here: a server without replication starts without them
 * (about a tenth of a start's CPU).
 */
async function replicationFor(
  config: Config,
  journal: Journal,
  role: ServerRoleState,
  engine: EngineHost,
  index: JournalIndex | null,
  log: (message: string) => void,
): Promise<Replication | null> {
  if (config.replication === null || config.logFile === null) return null;
  const { Replication } = await import('../replication/replication');
  return new Replication({
    config,
    replication: config.replication,
    journal,
    journalFile: config.logFile,
    role,
    primaryAppliedSeq: () => journal.lastSeq,
    fileOf: databaseFileIn(config),
    release: (file) => engine.closeDatabase(file),
    // A replica's restores read its own journal through its own index (its follower appends what it copies to both).
    index: index === null ? null : { file: indexFileOf(config.logFile), settle: () => index.settle() },
    log,
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

export async function composeServer(config: Config): Promise<Composition> {
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
  const index =
    config.historyIndex && logFile !== null && journal.enabled ? JournalIndex.open(logFile, journal, log) : null;
  const engine = new BoundedReadHost(
    new ProcessEngineHost({
      queryTimeoutMs: config.queryTimeoutMs,
      maxProcesses: config.engines,
      clientShare: config.clientShare,
    }),
  );
  const role = new ServerRoleState(config.replication === null ? 'standalone' : 'primary');
  const { bus, writePath, feed, tokens, copyGate, refusals } = composeServices(
    config,
    engine,
    journal,
    { repair, log, observer: metrics },
    role,
    index,
  );
  const replication = await replicationFor(config, journal, role, engine, index, log);
  // A replica's databases are settled as far as its follower applied them; elsewhere the write path knows.
  const settled = (): number => replication?.settledThrough() ?? writePath.settledThrough();
  const readiness = new Readiness();
  if (replication !== null) metrics.replicationFrom(() => replication.status());
  // A primary's rounds go to JetStream too, for new replicas to start from.
  const afterRound =
    replication === null ? undefined : (manifest: SnapshotManifest) => replication.roundTaken(manifest);
  const snapshots = schedulerFor(
    config,
    () => journal.lastSeq,
    settled,
    (work) => copyGate.snapshotting(work),
    afterRound,
  );
  const lifecycle = new ServiceLifecycle({
    config,
    lock,
    journal,
    index,
    writePath,
    bus,
    role,
    replication,
    copyGate,
    readiness,
    snapshots,
    afterRound,
    settled,
    log,
  });
  return {
    metrics,
    readiness,
    bus,
    feed,
    tokens,
    refusals,
    replication,
    start: (url) => lifecycle.start(url),
    close: () => lifecycle.close(),
  };
}
