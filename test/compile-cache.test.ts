// Each start of the server, an engine process or replay reads its modules' compiled code from
// Node's compile cache (src/compile-cache.ts) instead of compiling them again; and a server
// without replication never loads the NATS client at all.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAIN, REPLAY } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

/** Runs `node file -h` with this temporary directory and no NODE_COMPILE_CACHE of the test runner's. */
function helpWith(file: string, tmp: string, extra: Record<string, string> = {}): number | null {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, ...extra };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, [file, '-h'], { env, stdio: 'ignore' }).status;
}

/** The files of the compile cache under the temporary directory. */
function cachedFiles(tmp: string): string[] {
  const dir = path.join(tmp, 'node-compile-cache');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => fs.statSync(path.join(dir, name)).isFile());
}

for (const [name, file] of [
  ['the server', MAIN],
  ['replay', REPLAY],
] as const) {
  t.test(`${name} keeps its compiled modules in the temporary directory's compile cache`, async (t) => {
    const tmp = scratchDir(t);
    t.equal(helpWith(file, tmp), 0);
    t.ok(cachedFiles(tmp).length > 10, `modules cached (${cachedFiles(tmp).length} files)`);
    const off = scratchDir(t);
    t.equal(helpWith(file, off, { NODE_DISABLE_COMPILE_CACHE: '1' }), 0);
    t.same(cachedFiles(off), [], 'NODE_DISABLE_COMPILE_CACHE=1 turns it off');
  });
}

t.test('a server without replication does not load the NATS client', async (t) => {
  // server.js is everything main.js starts (the HTTP app, its routes, the composition) but the call itself.
  const server = path.resolve(__dirname, '../dist/src/server.js');
  const script = `require(${JSON.stringify(server)}); const loaded = Object.keys(require.cache); console.log(JSON.stringify({ nats: loaded.filter((f) => f.includes('@nats-io')).length, all: loaded.length }));`;
  const run = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  t.equal(run.status, 0, run.stderr);
  const counts = JSON.parse(run.stdout) as { nats: number; all: number };
  t.ok(counts.all > 50, `the composition loaded (${counts.all} modules)`);
  t.equal(counts.nats, 0, 'no module of @nats-io');
});
