#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8
/** The process entry: command line → config → server; signals stop it cleanly. */
import './compile-cache';
import { InstanceLockError } from './startup/instance-lock';
import { OptionsError, parseCommandLine } from './config/options';
import { runtimeRefusal } from './runtime-support';
import { startServer } from './server';
import { version } from './version';

async function main(): Promise<void> {
  const refusal = runtimeRefusal(process.versions);
  if (refusal !== null) {
    process.stderr.write(`sqlscribe: ${refusal}\n`);
    process.exit(2);
  }
  let parsed;
  try {
    parsed = parseCommandLine(process.argv.slice(2), process.cwd());
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    process.stderr.write(`sqlscribe: ${error.message} (run with -h for help)\n`);
    process.exit(2);
  }
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.usage);
    return;
  }
  if (parsed.kind === 'version') {
    process.stdout.write(parsed.line);
    return;
  }
  const { config } = parsed;
  const server = await startServer(config);
  const where = config.mode === 'single' ? `database ${config.dbFile}` : `directory ${config.dir}`;
  process.stderr.write(`sqlscribe ${version} listening on ${server.url} (${config.mode}-db, ${where})\n`);
  const recovered = await server.ready;
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Said only once a stop is handled: a supervisor that stops the server as soon as it reads this line gets a clean stop.
  process.stderr.write(`sqlscribe ready (${recovered.applied} journal entries applied at start-up)\n`);
}

main().catch((error: unknown) => {
  // Another server holds the directory or the journal: a usage error, like a bad flag.
  if (error instanceof InstanceLockError) {
    process.stderr.write(`sqlscribe: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`sqlscribe: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

// A rejection nobody handled is a bug, but one request's bug must not stop the
// service for every other client: it is logged, with its stack, and the server serves on.
process.on('unhandledRejection', (reason: unknown) => {
  process.stderr.write(
    `sqlscribe: internal error, serving on: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`,
  );
});
