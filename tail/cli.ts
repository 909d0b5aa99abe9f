#!/usr/bin/env node
/**
 * The journal follower: delivers the entries that pass its filters, in seq
 * order, to stdout, a command or a webhook, and keeps its place in a cursor
 * file so that a restart resumes after the last entry it handled.
 */
import { JournalError } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import { asksForVersion, versionLine } from '../src/config/command-line';
import { OptionsError } from '../src/config/options-values';
import { version } from '../src/version';
import { CursorError, writeCursor } from './cursor';
import { execSink, stdoutSink, webhookSink, type Deliver } from './deliver';
import { matches } from './filter';
import { OutFileError, outFileSink } from './out-file';
import { Follower } from './follow';
import { GaveUpError, withRetries } from './retry';
import { startSeq } from './start';
import { parseTailOptions, TAIL_USAGE, type TailOptions } from './tail-options';

function say(message: string): void {
  process.stderr.write(`tail: ${message}\n`);
}

function sinkOf(options: TailOptions): Deliver {
  if (options.out !== null) return outFileSink(options.out);
  if (options.exec !== null) return execSink(options.exec, options.timeoutMs);
  if (options.webhook !== null) return webhookSink(options.webhook, options.timeoutMs);
  return stdoutSink(options.format);
}

/** Set while an entry is being delivered: a stop request then waits for its cursor write. */
let delivering = false;
let stopRequested = false;

function stopOnSignals(): void {
  const stop = (): void => {
    if (!delivering) process.exit(0);
    stopRequested = true;
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/**
 * Matching entries are delivered and then counted in the cursor, one by one:
 * the cursor never passes an entry that was not delivered. Entries the
 * filters pass over move the cursor only at the end of a poll, to spare a
 * sync per skipped line.
 */
function handlerFor(options: TailOptions, deliver: Deliver, cursorAt: { seq: number }) {
  const save = (seq: number): void => {
    if (options.cursor !== null) writeCursor(options.cursor, seq);
    cursorAt.seq = seq;
  };
  let handled = cursorAt.seq;
  return {
    handle: async (entry: JournalEntry): Promise<void> => {
      handled = entry.seq;
      if (!matches(options.filter, entry)) return;
      delivering = true;
      await deliver(entry);
      save(entry.seq);
      delivering = false;
      if (stopRequested) process.exit(0);
    },
    flush: (): void => {
      if (handled !== cursorAt.seq) save(handled);
    },
    rewound: (next: number): void => {
      handled = next - 1;
      save(handled);
    },
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function run(options: TailOptions): Promise<number> {
  const { next, fromCursor } = await startSeq(options.logFile, options.start, options.cursor, options.out);
  const cursorAt = { seq: next - 1 };
  // A new cursor is written before anything is read, so that a follower killed before its first delivery resumes here, not at a later end.
  if (options.cursor !== null && !fromCursor) writeCursor(options.cursor, cursorAt.seq);
  const deliver = withRetries(sinkOf(options), options, say);
  const handler = handlerFor(options, deliver, cursorAt);
  const follower = new Follower(
    options.logFile,
    next,
    { handle: handler.handle, rewound: handler.rewound, warn: say },
    options.pollMs,
  );
  stopOnSignals();
  for (;;) {
    const caughtUp = await follower.poll();
    handler.flush();
    if (options.once && caughtUp) return 0;
    if (caughtUp) await pause(options.pollMs);
  }
}

async function main(): Promise<number> {
  // Answered before the flags are read, so that parseTailOptions keeps its two answers (options or 'help').
  if (asksForVersion(process.argv.slice(2))) {
    process.stdout.write(versionLine('sqlscribe tail', version));
    return 0;
  }
  try {
    const options = parseTailOptions(process.argv.slice(2), process.cwd());
    if (options === 'help') {
      process.stdout.write(TAIL_USAGE);
      return 0;
    }
    return await run(options);
  } catch (error) {
    if (error instanceof OptionsError) say(`${error.message} (run with -h for help)`);
    else if (error instanceof JournalError || error instanceof CursorError || error instanceof OutFileError)
      say(error.message);
    else if (error instanceof GaveUpError) {
      say(error.message);
      return 1;
    } else throw error;
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
