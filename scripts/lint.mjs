// `npm run lint`: the type checks of the tests and of the console's browser modules, ESLint and
// Prettier's check, side by side (each is single-threaded; one after another they took 26 s of
// the 30 s `npm test` spends before the suite). With --build (the first step of `npm test`) the build runs
// beside them, and the tests' type check is the build: one tsc program over the sources and the
// tests writes dist/ (what `npm run build` writes, and dist/test/, which the test processes run
// instead of compiling the tests each time) where two programs checked the sources twice. None
// of the other checks reads dist/. Each one's output is printed whole when it ends, under its
// name; the run fails when any fails.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

const TYPES_OF_THE_TESTS = ['types of the tests', bin('tsc'), ['-p', 'tsconfig.test.json']];
const OTHER_CHECKS = [
  ['types of the browser modules', bin('tsc'), ['-p', 'tsconfig.browser.json']],
  ['eslint', bin('eslint'), ['src', 'journal', 'replay', 'tail']],
  ['prettier', bin('prettier'), ['--check', '.']],
];

/** Runs one check to its end; resolves with whether it passed. */
function run([name, command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    // A command that cannot start says why here; 'close' follows, with a negative code.
    child.on('error', (error) => (output += `${error.message}\n`));
    child.on('close', (code) => {
      const passed = code === 0;
      process.stdout.write(`${passed ? '✓' : '✗'} ${name}\n${passed ? '' : output}`);
      resolve(passed);
    });
  });
}

const BUILD = [
  ['build: the service and the tests, types checked', bin('tsc'), ['-p', 'tsconfig.test.json', '--noEmit', 'false']],
  ['build: the console', 'npm', ['run', 'build:console']],
];
const withBuild = process.argv.includes('--build')
  ? [...BUILD, ...OTHER_CHECKS]
  : [TYPES_OF_THE_TESTS, ...OTHER_CHECKS];
const results = await Promise.all(withBuild.map(run));
process.exitCode = results.every(Boolean) ? 0 : 1;
