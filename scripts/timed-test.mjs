// `npm test`: builds and checks (scripts/lint.mjs --build), then runs tap (its settings stay in
// package.json's "tap" section) with any arguments given after `npm test --`, then says how long
// the whole took and how much of it was the build and checks, so that every run, locally and in CI,
// shows whether the suite stays fast. When something failed, it names the failures last, where a
// log cut to its tail still shows them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failureReport } from './tap-failures.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tap = path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const startedAt = Date.now();

// Node keeps the compiled code of every module a test process, server or engine process loads
// (tap's own, most of all) in one cache for the run and the next: each of the suite's thousand or
// so processes then compiles less.
const env = {
  ...process.env,
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(root, '.tap', 'compile-cache'),
};

// The tests' scratch directories (each server's data and journal, copies, browser profiles) go to
// memory when the machine has a tmpfs at /dev/shm and no TMPDIR is given. Every test server syncs
// its journal on each write (-log-fsync is on by default); on a disk each sync waits for it and
// costs the kernel work (the suite: 221–238 s on disk, 211 s in memory), and no test needs its
// files to outlive a power cut (the disk-full tests mount a small tmpfs of their own).
const scratch = memoryScratch();
if (scratch !== undefined) env.TMPDIR = scratch;

function memoryScratch() {
  if (process.env.TMPDIR !== undefined) return undefined;
  try {
    const dir = fs.mkdtempSync('/dev/shm/sqlscribe-npm-test-');
    // Open to all as /tmp is: processes of other users reach the directories tests make in it
    // (nginx's workers, started by root, run as nobody and write request bodies there).
    fs.chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
}

/** Runs `node script args…` in the project with the run's environment; resolves with its exit code. */
function run(script, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const elapsed = (since) => ((Date.now() - since) / 1000).toFixed(1);

// Ctrl-C reaches the children through the terminal too; the wrapper only waits for them to end.
process.on('SIGINT', () => {});
let code = await run(path.join(root, 'scripts', 'lint.mjs'), ['--build']);
const took = [`build and checks ${elapsed(startedAt)} s`];
const suiteStartedAt = Date.now();
if (code === 0) {
  code = await run(tap, process.argv.slice(2));
  took.push(`the suite ${elapsed(suiteStartedAt)} s`);
}
// What a test killed before its teardown left behind goes with the directory.
if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true });
if (code !== 0) {
  const report = failureReport(path.join(root, '.tap', 'test-results'), suiteStartedAt);
  if (report !== '') console.log(`\nWhat failed:\n${report}`);
}
console.log(`npm test took ${elapsed(startedAt)} s (${took.join(', ')})`);
process.exit(code);
