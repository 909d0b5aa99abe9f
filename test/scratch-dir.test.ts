/**
 * The scratch directory outlives what the test started in it: a teardown
 * registered after it (a server's stop) runs first and may still write there,
 * and only then is the directory removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from './helpers/scratch-dir';

t.test('teardowns registered later run before the removal, which then succeeds', async (tt) => {
  let dir = '';
  let wroteInTeardown = false;
  await tt.test('a test that starts something in its scratch directory', async (inner) => {
    dir = scratchDir(inner, { data: { 'a.db': 'x' }, 'notes.txt': 'n' });
    inner.equal(fs.readFileSync(path.join(dir, 'data', 'a.db'), 'utf8'), 'x', 'content is written');
    inner.teardown(() => {
      // What a server does while it stops: write into the directory.
      fs.mkdirSync(path.join(dir, 'journal'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'journal', 'applied.json'), '{}');
      wroteInTeardown = true;
    });
  });
  tt.ok(wroteInTeardown, 'the later teardown ran');
  tt.notOk(fs.existsSync(dir), 'and the directory is gone afterwards');
});
