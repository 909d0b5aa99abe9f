/**
 * Loads the TypeScript of the tests (and of src/, journal/, replay/, tail/ that
 * they import) in tap's test processes, through package.json's "tap"
 * "node-arg". tap's own loader (ts-node) loads the whole TypeScript compiler
 * into every test process, about half a second of CPU each, over a hundred
 * times a run, and again in each engine process a unit test forks from src/;
 * esbuild only strips the types, in milliseconds. Type checking stays with
 * `npm run lint` (tsc -p tsconfig.test.json), which `npm test` runs first.
 */
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const esbuild = require('esbuild');

// What tsconfig.json says that changes the emitted code: ES2022 class fields, and
// CommonJS modules with esModuleInterop (esbuild's default for a CommonJS import).
const OPTIONS = {
  loader: 'ts',
  format: 'cjs',
  target: 'es2022',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
};

Module._extensions['.ts'] = function loadTypeScript(module, filename) {
  const { code } = esbuild.transformSync(fs.readFileSync(filename, 'utf8'), { ...OPTIONS, sourcefile: filename });
  module._compile(code, filename);
};

// tap's --import preloads make Node start the test file through its ES module
// loader, which on Node 22 strips the types itself and then fails on `import`
// in a CommonJS file. A .ts file is CommonJS here (package.json "type"), so on
// Node 22 the hook below sends it back to the CommonJS loader above: a
// commonjs format without source is loaded by Module._extensions. Node 24
// hands it to Module._extensions by itself (and fails with the hook).
const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('.ts')) return { format: 'commonjs', shortCircuit: true };
  return next(url, context);
}`;
if (Number(process.versions.node.split('.')[0]) < 24) Module.register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
