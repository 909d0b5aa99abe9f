/**
 * test/helpers/ts-require.cjs runs a test file as tsc compiled it before the run when that copy is
 * current (no esbuild loaded), and compiles it with esbuild when the source is newer; either way a
 * stack trace names the line of the .ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const root = path.resolve(__dirname, '..');
const source = path.join(root, 'test/fixtures/ts-require/thrower.ts');
const copy = path.join(root, 'dist/test/fixtures/ts-require/thrower.js');

const PROBE = `
const { throwHere } = require(${JSON.stringify(source)});
let line = 'no throw';
try { throwHere(); } catch (error) { line = error.stack.split('\\n')[1].trim(); }
const esbuild = Object.keys(require.cache).some((file) => file.includes('/node_modules/esbuild/'));
process.stdout.write(JSON.stringify({ line, esbuild }));
`;

function probe(): { line: string; esbuild: boolean } {
  const output = execFileSync(
    process.execPath,
    ['--enable-source-maps', '--require', path.join(root, 'test/helpers/ts-require.cjs'), '-e', PROBE],
    { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(output) as { line: string; esbuild: boolean };
}

t.test('a current compiled copy runs as tsc wrote it, mapped to the .ts', async (t) => {
  t.ok(fs.existsSync(copy), 'npm test compiled the fixture into dist/');
  const { line, esbuild } = probe();
  t.equal(esbuild, false, 'esbuild is not loaded');
  t.match(line, /thrower\.ts:4:/, 'the stack names line 4 of the source');
});

t.test('a source newer than its copy is compiled by esbuild instead', async (t) => {
  const { atime, mtime } = fs.statSync(copy);
  fs.utimesSync(copy, new Date(0), new Date(0));
  t.teardown(() => fs.utimesSync(copy, atime, mtime));
  const { line, esbuild } = probe();
  t.equal(esbuild, true, 'esbuild compiled it');
  t.match(line, /thrower\.ts:4:/, 'the stack names line 4 of the source');
});
