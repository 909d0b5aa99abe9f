/**
 * The database directory remembers which names are databases: resolving a
 * known one costs no system call, DROP DATABASE forgets it, and a file put
 * in the directory by hand is found on the first request that names it.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parseCommandLine } from '../src/config/options';
import { DatabaseDirectory } from '../src/services/databases/database-directory';
import { EngineError } from '../src/errors';

function directory(dir: string): DatabaseDirectory {
  const parsed = parseCommandLine(['-dir', dir, '-log-level', 'none'], dir);
  if (parsed.kind !== 'config') throw new Error('expected a config');
  return new DatabaseDirectory(parsed.config);
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof EngineError) return error.errorName;
    throw error;
  }
  return undefined;
}

t.test('a known database resolves without a system call; a dropped one is gone; a new file is found', async (t) => {
  const dir = t.testdir({ 'school.db': '' });
  const databases = directory(dir);
  const lstat = fs.lstatSync;
  let calls = 0;
  const counting = ((...args: Parameters<typeof fs.lstatSync>) => {
    calls++;
    return lstat(...args);
  }) as typeof fs.lstatSync;
  const writable = fs as { lstatSync: typeof fs.lstatSync };
  writable.lstatSync = counting;
  t.teardown(() => {
    writable.lstatSync = lstat;
  });

  t.same(databases.resolve('school'), { name: 'school.db', file: path.join(dir, 'school.db') });
  t.equal(calls, 1, 'the first request looks at the file');
  for (let i = 0; i < 100; i++) databases.resolve('School.db');
  t.equal(calls, 1, 'a hundred more cost no system call');

  databases.remove(databases.refOf('school.db'));
  t.equal(
    codeOf(() => databases.resolve('school')),
    'NO_SUCH_DATABASE',
    'a dropped database is not served from memory',
  );

  fs.writeFileSync(path.join(dir, 'added.db'), '');
  t.equal(databases.resolve('added').name, 'added.db', 'a file added by hand is found');
  t.equal(
    codeOf(() => databases.resolve('missing')),
    'NO_SUCH_DATABASE',
    'an unknown name is still looked up every time',
  );
});
