/**
 * The house's imports flow one way: main → server → app, routes and HTTP
 * middleware → the command bus → services → engine and journal → shared pure
 * modules; the replay tool stands beside the services, on the engine and the
 * journal. A module may import from its own floor or below, never above, and
 * no files import each other in a circle. Read from the source text, so that
 * it fails the moment someone adds an import against the order.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const ROOT = path.resolve(__dirname, '..');

/** Floors, highest first: the first prefix a file's path starts with gives its floor. */
const FLOORS: ReadonlyArray<readonly [number, readonly string[]]> = [
  [7, ['src/main.ts']],
  [6, ['src/server.ts', 'src/startup/compose.ts', 'src/startup/service-lifecycle.ts', 'src/startup/recovery.ts', 'src/startup/journal-setup.ts', 'src/startup/applied-checkpoints.ts', 'src/startup/shutdown-checkpoint.ts', 'src/startup/instance-lock.ts']],
  [5, ['src/app.ts', 'src/routes/', 'src/http/', 'src/console/', 'src/openapi/']],
  [4, ['src/bus/', 'src/exercises/']],
  [3, ['src/services/', 'src/tokens/', 'src/sessions/', 'src/pilots/', 'src/snapshots/', 'src/replication/', 'replay/', 'tail/']],
  [2, ['src/engine/', 'journal/']],
  [1, ['src/access/', 'src/clock.ts', 'src/config/command-line.ts', 'src/database-names.ts', 'src/errors.ts', 'src/errors-markdown.ts', 'src/config/flag-defaults.ts', 'src/config/flag-table.ts', 'src/config/flags-markdown.ts', 'src/version.ts', 'src/json-text.ts', 'src/config/options.ts', 'src/config/options-values.ts', 'src/runtime-support.ts']],
];

function floorOf(file: string): number {
  for (const [floor, prefixes] of FLOORS) if (prefixes.some((prefix) => file === prefix || file.startsWith(prefix))) return floor;
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

const files = [...sourceFiles('src'), ...sourceFiles('journal'), ...sourceFiles('replay'), ...sourceFiles('tail')];
const graph = new Map(files.map((file) => [file, importsOf(file)]));

t.test('every import goes to the same floor or below', async (t) => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) if (floorOf(target) > floorOf(file)) upward.push(`${file} (floor ${floorOf(file)}) → ${target} (floor ${floorOf(target)})`);
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
