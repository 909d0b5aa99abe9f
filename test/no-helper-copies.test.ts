/**
 * The shared test helpers (sleep, waitFor and eventually in helpers/wait.ts,
 * execOk in helpers/exec.ts) exist once; a test file that grows its own copy
 * (a polling loop called `until` is a waitFor by another name) drifts from
 * the others, so this fails when one is defined again.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const HELPERS = ['sleep', 'waitFor', 'until', 'eventually', 'execOk'];
const dir = __dirname;
const files = [
  ...fs.readdirSync(dir).filter((name) => name.endsWith('.ts')),
  ...fs
    .readdirSync(path.join(dir, 'helpers'))
    .filter((name) => name.endsWith('.ts') && !['wait.ts', 'exec.ts'].includes(name))
    .map((name) => path.join('helpers', name)),
];

t.test('no test file defines a shared helper again', async (tt) => {
  tt.ok(files.length > 10, 'the scan sees the test files');
  for (const helper of HELPERS) {
    const definition = new RegExp(`(?:function\\s+${helper}\\s*[(<]|(?:const|let|var)\\s+${helper}\\s*[=:])`);
    const copies = files.filter((name) => definition.test(fs.readFileSync(path.join(dir, name), 'utf8')));
    tt.strictSame(copies, [], `${helper} is defined only in test/helpers (import it from there)`);
  }
});
