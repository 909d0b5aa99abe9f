#!/usr/bin/env node
/**
 * The replay tool: rebuilds one database or all of them from
 * the journal, optionally up to a point in time, and optionally verifies the
 * rebuild against live files.
 */
import '../src/compile-cache';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../src/errors';
import { Engine } from '../src/engine/engine';
import { engineVersions } from '../src/engine/engine-versions';
import { JournalError, readJournalLazily, type JournalContents } from '../journal/reader';
import { EntryLineError, type ReadEntry } from '../journal/entry-line';
import { engineMismatches } from './engine-check';
import { rebuild, REBUILD_PAGE_CACHE_KIB } from './rebuild';
import { versionLine } from '../src/config/command-line';
import { OptionsError } from '../src/config/options-values';
import { version } from '../src/version';
import { runtimeRefusal } from '../src/runtime-support';
import { parseReplayOptions, REPLAY_USAGE, type ReplayOptions } from './replay-options';
import { compareDatabases } from './verify';
import { ReplayError } from './apply-entries';
import { copyRound, planRestore, TooOldError } from './restore-plan';
import { syncDatabases } from './sync-output';
import { databasesNeeded } from './template-sources';
import { restorerFor } from './point-in-time';

class Refusal extends Error {}

function say(message: string): void {
  process.stderr.write(`replay: ${message}\n`);
}

/** A journal that does not record every change cannot rebuild anything. */
function checkLevels(headers: JournalContents['headers']): void {
  const incomplete = headers.find(({ header }) => header.level === 'none' || header.level === 'error');
  if (incomplete)
    throw new Refusal(
      `${incomplete.file} was written at level ${incomplete.header.level}: it does not record every change, so it cannot rebuild anything`,
    );
}

/** The entries replay applies must have been written by this engine, unless -force (engine-check.ts). */
function checkEngine(headers: JournalContents['headers'], entries: readonly ReadEntry[], force: boolean): void {
  for (const { file, detail } of engineMismatches(headers, entries, engineVersions())) {
    if (!force)
      throw new Refusal(
        `${file} was written with another engine (${detail}); replay could give other values. Restore from a snapshot round taken since (the server takes one at its first start on a new engine), or use -force to replay anyway`,
      );
    say(`warning: ${file}: ${detail}`);
  }
}

function selectEntries(
  entries: readonly ReadEntry[],
  options: ReplayOptions,
  needed: ReadonlySet<string> | null,
): ReadEntry[] {
  const until = options.until;
  return entries.filter((entry) => {
    if (needed !== null && !needed.has(entry.db as string)) return false;
    if (until === null) return true;
    return 'seq' in until ? entry.seq <= until.seq : Date.parse(entry.ts) <= until.time;
  });
}

function progressBar(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => {
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    process.stderr.write(
      `\rreplaying [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}${done === total ? '\n' : ''}`,
    );
  };
}

function verify(options: ReplayOptions, rebuilt: string[]): string | null {
  const target = options.verify as string;
  const isDirectory = fs.statSync(target).isDirectory();
  if (!isDirectory && rebuilt.length !== 1)
    throw new Refusal(`-verify ${target} is one file but ${rebuilt.length} databases were rebuilt: add -db`);
  const live = isDirectory ? fs.readdirSync(target).filter((name) => name.endsWith('.db')) : [];
  for (const name of isDirectory ? [...new Set([...live, ...rebuilt])].sort() : rebuilt) {
    const liveFile = isDirectory ? path.join(target, name) : target;
    if (!fs.existsSync(liveFile)) return `${name} was rebuilt but is not among the live files`;
    if (!rebuilt.includes(name)) return `${name} is live but the journal does not rebuild it`;
    const difference = compareDatabases(liveFile, path.join(options.out, name));
    if (difference) return `${name}: ${difference}`;
  }
  return null;
}

async function run(options: ReplayOptions): Promise<number> {
  const { round } = await planRestore(options);
  // Entries are decoded as they are applied (entry-line.ts): held decoded all at once, they cost more to collect than to decode.
  const contents = await readJournalLazily(options.logFile, round === undefined ? {} : { fromSeq: round.base + 1 });
  for (const warning of contents.warnings) say(`warning: ${warning}`);
  checkLevels(contents.headers);
  // With -db, the templates it was copied from are rebuilt beside it, and removed at the end.
  const needed = options.db === null ? null : databasesNeeded(contents.entries, options.db);
  const entries = selectEntries(contents.entries, options, needed);
  checkEngine(contents.headers, entries, options.force);
  fs.mkdirSync(options.out, { recursive: true });
  if (fs.readdirSync(options.out).some((name) => name.endsWith('.db')))
    throw new Refusal(`${options.out} already holds databases: choose an empty directory`);
  if (round !== undefined) {
    const copied =
      needed === null
        ? copyRound(round, options.snapshotDir as string, options.out, null)
        : [...needed].flatMap((db) => copyRound(round, options.snapshotDir as string, options.out, db));
    say(
      `started from the snapshot through seq ${round.through} (${copied.length} database${copied.length === 1 ? '' : 's'}), then the journal from seq ${round.base + 1}`,
    );
  }
  // Unsynced commits, one sync of every file at the end (sync-output.ts): the output is new, so a crash only means running replay again.
  const engine = new Engine({ syncCommits: false, pageCacheKiB: REBUILD_PAGE_CACHE_KIB });
  const onProgress = progressBar();
  try {
    const restorer = restorerFor({ logFile: options.logFile, snapshotDir: options.snapshotDir });
    const result = await rebuild(engine, entries, {
      fileOf: (db) => path.join(options.out, db),
      restorer,
      ...(onProgress ? { onProgress } : {}),
    });
    say(`applied ${result.applied} of ${entries.length} entries (through seq ${entries.at(-1)?.seq ?? 0})`);
  } finally {
    // Closing the last handle on a file checkpoints its WAL into it; the sync comes after.
    engine.close();
  }
  for (const helper of needed ?? []) {
    if (helper === options.db) continue;
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      fs.rmSync(path.join(options.out, helper + suffix), { force: true });
  }
  syncDatabases(options.out);
  const rebuilt = fs
    .readdirSync(options.out)
    .filter((name) => name.endsWith('.db'))
    .sort();
  say(
    `rebuilt ${rebuilt.length} database${rebuilt.length === 1 ? '' : 's'} into ${options.out}: ${rebuilt.join(', ') || '(none)'}`,
  );
  if (options.verify === null) return 0;
  const difference = verify(options, rebuilt);
  if (difference === null) {
    say('verify: the rebuild equals the live databases');
    return 0;
  }
  say(`verify: first difference: ${difference}`);
  return 1;
}

async function main(): Promise<number> {
  const refusal = runtimeRefusal(process.versions);
  if (refusal !== null) {
    say(refusal);
    return 2;
  }
  try {
    const options = parseReplayOptions(process.argv.slice(2), process.cwd());
    if (options === 'help') {
      process.stdout.write(REPLAY_USAGE);
      return 0;
    }
    if (options === 'version') {
      process.stdout.write(versionLine('sqlscribe replay', version));
      return 0;
    }
    return await run(options);
  } catch (error) {
    if (error instanceof OptionsError || error instanceof EngineError) say(`${error.message} (run with -h for help)`);
    else if (
      error instanceof JournalError ||
      error instanceof EntryLineError ||
      error instanceof Refusal ||
      error instanceof ReplayError ||
      error instanceof TooOldError
    )
      say(error.message);
    else throw error;
    return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
