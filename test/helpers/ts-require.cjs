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
