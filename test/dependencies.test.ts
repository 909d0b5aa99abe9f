/**
 * One policy for what package.json asks npm for: every version exact, so that the release a test ran on is
 * the one a school installs; and `dependencies` only what the built service loads at run time, so that a
 * package the build bundles (CodeMirror, into dist/console/editor.js) or only a benchmark uses (the bare
 * Koa baseline's body parser) is a devDependency, installed by `npm ci` for the build and never loaded after.
 * Read from the files, so that it fails the moment a caret or a build-only package comes back.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const ROOT = path.resolve(__dirname, '..');

interface PackageJson {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** Source files under `dir` with one of `extensions`, skipping the folders in `skip` (relative to ROOT). */
function sourceFiles(dir: string, extensions: readonly string[], skip: readonly string[] = []): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return skip.includes(rel) ? [] : sourceFiles(rel, extensions, skip);
    return extensions.some((ext) => rel.endsWith(ext)) && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The package names a file imports or requires (a bare specifier's first one or two segments). */
function packagesImportedBy(file: string): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const names = new Set<string>();
  for (const match of text.matchAll(/(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*)'([^'.][^']*)'/g)) {
    const specifier = match[1] as string;
    if (specifier.startsWith('node:')) continue;
    const parts = specifier.split('/');
    names.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string));
  }
  return names;
}

t.test('every version in package.json is exact (no ranges)', async (t) => {
  const ranged = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })
    .filter(([, version]) => !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version))
    .map(([name, version]) => `${name}@${version}`);
  t.same(ranged, [], 'each dependency names one release');
});

t.test('dependencies holds only what the built service loads', async (t) => {
  const compiled = ['src', 'journal', 'replay', 'tail'].flatMap((dir) =>
    sourceFiles(dir, ['.ts'], ['src/console/editor']),
  );
  t.ok(compiled.length > 100, `${compiled.length} compiled sources read`);
  const loaded = new Set(compiled.flatMap((file) => [...packagesImportedBy(file)]));
  const unused = Object.keys(pkg.dependencies).filter((name) => !loaded.has(name));
  t.same(unused, [], 'a package only the build or a benchmark needs is a devDependency');
});

t.test('the console editor bundles only packages package.json names, as devDependencies', async (t) => {
  const imported = [...packagesImportedBy('src/console/editor/editor.mjs')];
  t.ok(imported.includes('codemirror'), 'the editor imports CodeMirror');
  t.same(
    imported.filter((name) => pkg.devDependencies[name] === undefined),
    [],
    'each is a devDependency',
  );
});
