/**
 * Most integration tests start the built server (dist/), not the sources: after
 * an edit of src/ without `npm run build` they would pass or fail on the
 * previous code without a word. This finds the sources whose built output is
 * missing or older than they are, so that a run on a stale build stops at once.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Source roots compiled by tsc into dist/<root>, each .ts to a .js of the same path. */
export const COMPILED_ROOTS = ['src', 'journal', 'replay', 'tail'];

/** The console's editor, bundled by scripts/build-console.mjs into one file. */
const BUNDLES: ReadonlyArray<{ sources: string; output: string }> = [
  { sources: 'src/console/editor', output: 'dist/console/editor.js' },
];

function mtimeMs(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(keep)
    .map((name) => path.join(dir, name));
}

const isTypeScript = (name: string): boolean => name.endsWith('.ts') && !name.endsWith('.d.ts');

/** Sources (relative to `root`) newer than their build output, or with none; empty when dist/ is current. */
export function staleSources(root: string): string[] {
  const stale: string[] = [];
  for (const sourceRoot of COMPILED_ROOTS) {
    for (const source of filesUnder(path.join(root, sourceRoot), isTypeScript)) {
      const relative = path.relative(root, source);
      const built = mtimeMs(path.join(root, 'dist', relative.replace(/\.ts$/, '.js')));
      if (built === undefined || built < (mtimeMs(source) ?? 0)) stale.push(relative);
    }
  }
  for (const bundle of BUNDLES) {
    const built = mtimeMs(path.join(root, bundle.output)) ?? -1;
    for (const source of filesUnder(path.join(root, bundle.sources), () => true)) {
      if (built < (mtimeMs(source) ?? 0)) stale.push(path.relative(root, source));
    }
  }
  return stale;
}

/** The one line a stale build gets, naming a few of the sources. */
export function staleMessage(stale: readonly string[]): string {
  const named = stale.slice(0, 3).join(', ') + (stale.length > 3 ? ` and ${stale.length - 3} more` : '');
  return `dist/ is older than the sources (${named}): run npm run build`;
}
