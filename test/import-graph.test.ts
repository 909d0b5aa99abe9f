/**
 * The house's imports flow one way: main → server → app, routes and HTTP
 * middleware → the command bus → services → engine and journal → shared pure
 * modules; the replay tool stands beside the services, on the engine and the
 * journal. A module may import from its own floor or below, never above, and
 * no files import each other in a circle. Read from the source text, so that
 * it fails the moment someone adds an import against the order.
 *
 * The folders are the architecture too: each has its row in the Layout table
 * of docs/architecture.md, in floor order, and none holds more than
 * MAX_FILES_PER_FOLDER files, so that a folder's listing reads at a glance.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const ROOT = path.resolve(__dirname, '..');
const SOURCE_TREES = ['src', 'journal', 'replay', 'tail'];
/** Past this a folder is split into folders of its concerns. */
const MAX_FILES_PER_FOLDER = 15;
/** The console's page: browser modules served as they are, outside the import graph and its floors. */
const UNCOUNTED_FOLDERS = new Set(['src/console/static']);

/** Floors, highest first: the first prefix a file's path starts with gives its floor. */
const FLOORS: ReadonlyArray<readonly [number, readonly string[]]> = [
  [7, ['src/main.ts']],
  [6, ['src/server.ts', 'src/startup/']],
  [5, ['src/app.ts', 'src/routes/', 'src/http/', 'src/console/', 'src/openapi/']],
  [4, ['src/bus/', 'src/exercises/']],
  [
    3,
    [
      'src/services/',
      'src/tokens/',
      'src/sessions/',
      'src/pilots/',
      'src/snapshots/',
      'src/replication/',
      'replay/',
      'tail/',
    ],
  ],
  [2, ['src/engine/', 'journal/']],
  [
    1,
    [
      'src/access/',
      'src/config/',
      'src/clock.ts',
      'src/compile-cache.ts',
      'src/database-names.ts',
      'src/errors.ts',
      'src/iso-time.ts',
      'src/errors-markdown.ts',
      'src/version.ts',
      'src/json-text.ts',
      'src/runtime-support.ts',
    ],
  ],
];

function floorOf(file: string): number {
  for (const [floor, prefixes] of FLOORS)
    if (prefixes.some((prefix) => file === prefix || file.startsWith(prefix))) return floor;
  throw new Error(`${file} has no floor: add it to FLOORS`);
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'static' ? [] : sourceFiles(rel);
    return rel.endsWith('.ts') && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The project files a file imports (relative specifiers only; `import type` counts too). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/gm)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1] as string));
    found.push(fs.existsSync(path.join(ROOT, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`);
  }
  return found;
}

/** Every folder of a source tree, the tree itself included, with the files directly in it. */
function folders(dir: string): Array<{ folder: string; files: number }> {
  const entries = fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true });
  const inside = entries
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => folders(path.posix.join(dir, entry.name)));
  return [{ folder: dir, files: entries.filter((entry) => entry.isFile()).length }, ...inside];
}

/** The paths that open the rows of the Layout table of docs/architecture.md, in order (a row may name several). */
function layoutRows(): string[][] {
  const page = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = page.slice(page.indexOf('## Layout'), page.indexOf('\n## ', page.indexOf('## Layout') + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => (match[1] as string).replace(/\/$/, '')),
    );
}

const files = SOURCE_TREES.flatMap((tree) => sourceFiles(tree));
const graph = new Map(files.map((file) => [file, importsOf(file)]));

t.test('every import goes to the same floor or below', async (t) => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports)
      if (floorOf(target) > floorOf(file))
        upward.push(`${file} (floor ${floorOf(file)}) → ${target} (floor ${floorOf(target)})`);
  }
  t.same(upward, [], 'no import runs up the floors');
});

t.test('no files import each other in a circle', async (t) => {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  t.same(circles, [], 'no circle');
});

t.test('the test knows every source file', async (t) => {
  t.ok(files.length > 100, `${files.length} files read`);
  for (const file of files) floorOf(file);
});

t.test('every folder has its row in the Layout table of docs/architecture.md', async (t) => {
  const named = new Set(layoutRows().flat());
  const missing = SOURCE_TREES.flatMap((tree) => folders(tree))
    .map(({ folder }) => folder)
    .filter((folder) => folder !== 'src' && !named.has(folder));
  t.same(missing, [], 'add a row for each, where its floor puts it');
});

t.test('the Layout table runs from the top floor down', async (t) => {
  const floorOfPath = (name: string): number => floorOf(name.endsWith('.ts') ? name : `${name}/`);
  const rows = layoutRows().filter((names) =>
    names.every((name) => SOURCE_TREES.some((tree) => name === tree || name.startsWith(`${tree}/`))),
  );
  t.ok(rows.length > 20, `${rows.length} rows of source paths`);
  const upward: string[] = [];
  for (const [index, names] of rows.entries()) {
    const floors = names.map(floorOfPath);
    if (new Set(floors).size > 1) upward.push(`${names.join(', ')}: one row, floors ${floors.join(', ')}`);
    const previous = rows[index - 1];
    if (previous !== undefined && floorOfPath(previous[0] as string) < (floors[0] as number))
      upward.push(
        `${names[0]} (floor ${floors[0]}) after ${previous[0]} (floor ${floorOfPath(previous[0] as string)})`,
      );
  }
  t.same(upward, [], 'each row on its own floor, no row above one before it');
});

t.test(`no folder holds more than ${MAX_FILES_PER_FOLDER} files`, async (t) => {
  const crowded = SOURCE_TREES.flatMap((tree) => folders(tree))
    .filter(({ folder, files }) => files > MAX_FILES_PER_FOLDER && !UNCOUNTED_FOLDERS.has(folder))
    .map(({ folder, files }) => `${folder}: ${files} files`);
  t.same(crowded, [], 'split a crowded folder into folders of its concerns');
});
