/**
 * The guard that stops a test run on a stale dist/: a source newer than its
 * output, or without one, is named; a fresh build passes.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { staleMessage, staleSources } from './helpers/stale-build';

function touch(file: string, secondsAgo: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '');
  const when = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(file, when, when);
}

t.test('a build newer than every source is current', async (t) => {
  const root = t.testdir({});
  touch(path.join(root, 'src/a.ts'), 60);
  touch(path.join(root, 'journal/b.ts'), 60);
  touch(path.join(root, 'dist/src/a.js'), 10);
  touch(path.join(root, 'dist/journal/b.js'), 10);
  t.same(staleSources(root), []);
});

t.test('a source edited after the build is named, and the message says what to do', async (t) => {
  const root = t.testdir({});
  touch(path.join(root, 'src/a.ts'), 60);
  touch(path.join(root, 'dist/src/a.js'), 30);
  touch(path.join(root, 'replay/c.ts'), 5);
  touch(path.join(root, 'dist/replay/c.js'), 30);
  const stale = staleSources(root);
  t.same(stale, [path.join('replay', 'c.ts')]);
  t.match(staleMessage(stale), /replay\/c\.ts\): run npm run build$/);
});

t.test('a source never built is named; declaration files are not sources', async (t) => {
  const root = t.testdir({});
  touch(path.join(root, 'tail/new.ts'), 60);
  touch(path.join(root, 'src/types.d.ts'), 1);
  t.same(staleSources(root), [path.join('tail', 'new.ts')]);
});

t.test('an editor source newer than its bundle is named', async (t) => {
  const root = t.testdir({});
  touch(path.join(root, 'dist/console/editor.js'), 30);
  touch(path.join(root, 'src/console/editor/editor.mjs'), 5);
  t.same(staleSources(root), [path.join('src', 'console', 'editor', 'editor.mjs')]);
});

t.test('the repository itself is built from its current sources (npm test builds first)', async (t) => {
  t.same(staleSources(path.resolve(__dirname, '..')), []);
});
