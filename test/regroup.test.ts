/**
 * scripts/regroup/apply.mjs moves files into folders and rewrites every path
 * that named them. It is run again on trees it has never seen (after other
 * branches merge), so it is tried here on a small repository of its own: the
 * rewrites must come from resolving each path where its file stood, and a
 * second run must change nothing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const CODEMOD = path.resolve(__dirname, '../scripts/regroup/apply.mjs');

const FILES: Record<string, string> = {
  'src/main.ts': "import { a } from './a';\nimport { b } from './engine/b';\n",
  'src/a.ts': "import { b } from './engine/b';\nexport const a = b;\n",
  'src/settings.ts': 'export const o = 1;\n',
  'src/settings-values.ts': 'export const v = 1;\n',
  'src/engine/b.ts': "import { o } from '../settings';\nexport const b = o;\n",
  'src/engine/c.ts':
    "import { b } from './b';\nimport type { a } from '../a';\nconst worker = path.join(__dirname, 'b.js');\nexport const c = [b, worker];\n",
  'test/b.test.ts':
    "import { b } from '../src/engine/b';\nconst built = require(path.join(ROOT, 'dist/src/engine/b.js'));\nconst text = fs.readFileSync(path.join(ROOT, 'src', 'settings.ts'));\n",
  'docs/map.md': '[b](../src/engine/b.ts) and `src/settings.ts`; `src/engine/` stays.\n',
  'package.json': '{ "scripts": { "b": "node dist/src/engine/b.js" } }\n',
  'test/fixtures/old/main.mjs': "spawn('dist/src/engine/b.js');\n",
};

const MAP = {
  moves: {
    '# a note': '',
    'src/engine/b.ts': 'src/engine/core/b.ts',
    'src/a.ts': 'src/startup/a.ts',
    'src/settings*.ts': 'src/config/',
    'src/gone.ts': 'src/elsewhere/gone.ts',
  },
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

function repository(dir: string): string {
  for (const [file, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  fs.mkdirSync(path.join(dir, 'scripts/regroup'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'scripts/regroup/moves.json'), JSON.stringify(MAP));
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'start');
  return dir;
}

function regroup(dir: string, ...args: string[]): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [CODEMOD, '--map', 'scripts/regroup/moves.json', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

const read = (dir: string, file: string): string => fs.readFileSync(path.join(dir, file), 'utf8');

t.test('moves the files and rewrites each path from where its file stood', async (t) => {
  const dir = repository(t.testdir());
  const run = regroup(dir);
  t.equal(run.status, 0, run.out);
  t.match(run.out, /skip {2}src\/gone\.ts/, 'an entry not in this tree is skipped and said');
  t.match(run.out, /4 files moved/);
  for (const file of [
    'src/engine/core/b.ts',
    'src/startup/a.ts',
    'src/config/settings.ts',
    'src/config/settings-values.ts',
  ])
    t.ok(fs.existsSync(path.join(dir, file)), `${file} is there`);
  t.notOk(fs.existsSync(path.join(dir, 'src/engine/b.ts')), 'and not at its old place');
  t.equal(
    read(dir, 'src/main.ts'),
    "import { a } from './startup/a';\nimport { b } from './engine/core/b';\n",
    'a file that stays, importing files that move',
  );
  t.equal(
    read(dir, 'src/startup/a.ts'),
    "import { b } from '../engine/core/b';\nexport const a = b;\n",
    'a file that moves, importing one that moves',
  );
  t.equal(
    read(dir, 'src/engine/core/b.ts'),
    "import { o } from '../../config/settings';\nexport const b = o;\n",
    'a file that moves one folder down',
  );
  t.equal(
    read(dir, 'src/engine/c.ts'),
    "import { b } from './core/b';\nimport type { a } from '../startup/a';\nconst worker = path.join(__dirname, 'core/b.js');\nexport const c = [b, worker];\n",
    'a built file found from __dirname follows its source',
  );
  t.equal(
    read(dir, 'test/b.test.ts'),
    "import { b } from '../src/engine/core/b';\nconst built = require(path.join(ROOT, 'dist/src/engine/core/b.js'));\nconst text = fs.readFileSync(path.join(ROOT, 'src', 'config', 'settings.ts'));\n",
    'tests: imports, paths into dist/, paths given in pieces',
  );
  t.equal(
    read(dir, 'docs/map.md'),
    '[b](../src/engine/core/b.ts) and `src/config/settings.ts`; `src/engine/` stays.\n',
    'links and names in the docs',
  );
  t.equal(read(dir, 'package.json'), '{ "scripts": { "b": "node dist/src/engine/core/b.js" } }\n', 'package.json');
  t.equal(
    read(dir, 'test/fixtures/old/main.mjs'),
    FILES['test/fixtures/old/main.mjs'],
    'fixtures are recorded data, left alone',
  );
  t.equal(git(dir, 'diff', '--name-only'), '', 'everything staged for one commit');
  t.match(
    git(dir, 'diff', '--cached', '--name-status'),
    /R100\tsrc\/settings\.ts\tsrc\/config\/settings\.ts/,
    'moved with git mv (a file it does not edit is a pure rename)',
  );
});

t.test('refuses a second run, and a tree with changes, and changes nothing then', async (t) => {
  const dir = repository(t.testdir());
  fs.appendFileSync(path.join(dir, 'src/main.ts'), '// edited\n');
  const dirty = regroup(dir);
  t.not(dirty.status, 0);
  t.match(dirty.out, /work tree has changes/);
  git(dir, 'checkout', '--', 'src/main.ts');

  t.equal(regroup(dir).status, 0);
  git(dir, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'moved');
  const before = git(dir, 'rev-parse', 'HEAD');
  const again = regroup(dir);
  t.not(again.status, 0);
  t.match(again.out, /has this been run before/);
  t.equal(git(dir, 'status', '--porcelain'), '', 'nothing changed');
  t.equal(git(dir, 'rev-parse', 'HEAD'), before);
});

t.test('a dry run says what it would do and changes nothing', async (t) => {
  const dir = repository(t.testdir());
  const run = regroup(dir, '--dry-run');
  t.equal(run.status, 0);
  t.match(run.out, /move {2}src\/a\.ts -> src\/startup\/a\.ts/);
  t.match(run.out, /edit {2}src\/main\.ts: \.\/a -> \.\/startup\/a/);
  t.equal(git(dir, 'status', '--porcelain'), '');
});

t.test('run again after a merge, it repairs paths written against the old layout', async (t) => {
  const dir = repository(t.testdir());
  t.equal(regroup(dir).status, 0);
  git(dir, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'moved');
  // What a branch written against the old layout brings: a new file, a new file the map names, a line in a moved file.
  fs.writeFileSync(
    path.join(dir, 'src/extra.ts'),
    "import { o } from './settings';\nimport { b } from './engine/b';\n",
  );
  fs.writeFileSync(path.join(dir, 'src/settings-more.ts'), "import { o } from './settings';\n");
  fs.appendFileSync(path.join(dir, 'src/startup/a.ts'), "import { o } from './settings';\n");
  fs.appendFileSync(path.join(dir, 'docs/map.md'), 'See `src/engine/b.ts`.\n');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'merged');

  const run = regroup(dir);
  t.equal(run.status, 0, run.out);
  t.match(run.out, /1 files moved/);
  t.equal(
    read(dir, 'src/extra.ts'),
    "import { o } from './config/settings';\nimport { b } from './engine/core/b';\n",
    'a new file',
  );
  t.equal(read(dir, 'src/config/settings-more.ts'), "import { o } from './settings';\n", 'a new file the map moves');
  t.match(
    read(dir, 'src/startup/a.ts'),
    /import \{ o \} from '\.\.\/config\/settings';\n$/,
    'a line written where the moved file stood before',
  );
  t.match(read(dir, 'docs/map.md'), /See `src\/engine\/core\/b\.ts`\.\n$/);
  git(dir, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'repaired');
  t.not(regroup(dir).status, 0, 'and then there is nothing left to do');
});
