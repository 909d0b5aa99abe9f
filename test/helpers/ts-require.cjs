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

// tap preloads its process-info hooks after this file (--require runs before
// --import), and they read and record every module the process loads, for the
// coverage report and `tap --changed`. With coverage off only --changed reads
// the record, and it needs only the project's files: tap's own modules (most
// of what a test process loads) are left out too, which saves each test
// process about 0.4 s of CPU at start. The pattern is tap's own (the values
// it leaves out) with node_modules added; the project's files stay recorded,
// which also keeps the require() of an ES module file from dist/ working.
if (process.env.TAP_DISABLE_COVERAGE === '1')
  process.env._TAPJS_PROCESSINFO_EXCLUDE_ = String(/(^(node|tapmock):|[\\/](\.tap|tap-snapshots|node_modules)[\\/])/);

// What tsconfig.json says that changes the emitted code: ES2022 class fields, and
// CommonJS modules with esModuleInterop (esbuild's default for a CommonJS import),
// in which tsc turns `import()` into require() too.
const OPTIONS = {
  loader: 'ts',
  format: 'cjs',
  target: 'es2022',
  sourcemap: 'inline',
  supported: { 'dynamic-import': false },
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
};

function loadTypeScript(module, filename) {
  const { code } = esbuild.transformSync(fs.readFileSync(filename, 'utf8'), { ...OPTIONS, sourcefile: filename });
  module._compile(code, filename);
}
Module._extensions['.ts'] = loadTypeScript;

// tap's --import preloads make Node start the test file itself through its ES
// module loader, which would strip the types on its own (and fails on syntax
// that needs more than stripping, or on `import` in a CommonJS file). The hook
// hands a .ts file to the CommonJS loader instead: a commonjs format without
// source is loaded by Module._extensions, by the file's extension on Node 22
// and through the '.js' handler on Node 24, which therefore passes .ts on.
const loadJavaScript = Module._extensions['.js'];
Module._extensions['.js'] = function loadByName(module, filename) {
  if (filename.endsWith('.ts')) return loadTypeScript(module, filename);
  return loadJavaScript.call(this, module, filename);
};
// Node's in-thread hooks where it has them: Module.register runs its hooks in
// a thread of their own, started in every test process. Before Node 24.13 tap's
// own loaders still run in that thread, and an in-thread hook handing a file on
// to them fails (Node 22: "loadSync is not a function"), so older Nodes keep it.
const [major, minor] = process.versions.node.split('.').map(Number);
const inThread = typeof Module.registerHooks === 'function' && (major > 24 || (major === 24 && minor >= 13));
if (inThread) {
  Module.registerHooks({
    load(url, context, next) {
      if (url.startsWith('file:') && url.endsWith('.ts')) return { format: 'commonjs', shortCircuit: true };
      return next(url, context);
    },
  });
} else {
  const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('.ts')) return { format: 'commonjs', shortCircuit: true };
  return next(url, context);
}`;
  Module.register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
}
