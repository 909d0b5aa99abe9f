/**
 * Loads the TypeScript of the tests (and of src/, journal/, replay/, tail/ that
 * they import) in tap's test processes, through package.json's "tap"
 * "node-arg". tap's own loader (ts-node) loads the whole TypeScript compiler
 * into every test process, about half a second of CPU each, over a hundred
 * times a run, and again in each engine process a unit test forks from src/;
 * here a file runs as tsc compiled it before the run (see below), or as
 * esbuild strips its types, in milliseconds. Type checking stays with tsc
 * (tsconfig.test.json), which `npm test` runs first.
 */
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

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

// `npm test` compiles the tests with the sources in one tsc program before the run (its type check, emitting
// into dist/, test/ included): a test process then runs the JavaScript tsc already wrote for a file that is
// not newer than it. Any other file (no compiled copy, or edited since) is compiled here by esbuild, loaded only
// then: its module and its service process cost a test process about 0.1 s of CPU.
const ROOT = path.resolve(__dirname, '../..');
const DIST = path.join(ROOT, 'dist');

function compiledCopy(filename) {
  const relative = path.relative(ROOT, filename);
  if (relative.startsWith('..') || relative.startsWith('node_modules')) return undefined;
  const copy = path.join(DIST, `${relative.slice(0, -'.ts'.length)}.js`);
  try {
    if (fs.statSync(copy).mtimeMs < fs.statSync(filename).mtimeMs) return undefined;
    return withSourceMapOf(fs.readFileSync(copy, 'utf8'), copy, filename);
  } catch {
    return undefined;
  }
}

// The copy runs under the source's name, where Node finds no map file beside it: the map goes inline, naming
// the source by its full path, so that stack traces point into the .ts (as esbuild's maps do).
function withSourceMapOf(code, copy, filename) {
  const comment = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(code);
  if (comment === null) return code;
  const map = JSON.parse(fs.readFileSync(path.join(path.dirname(copy), comment[1]), 'utf8'));
  map.sources = [filename];
  map.sourceRoot = '';
  const inline = Buffer.from(JSON.stringify(map)).toString('base64');
  return `${code.slice(0, comment.index)}//# sourceMappingURL=data:application/json;base64,${inline}\n`;
}

function compileWithEsbuild(filename) {
  const esbuild = require('esbuild');
  return esbuild.transformSync(fs.readFileSync(filename, 'utf8'), { ...OPTIONS, sourcefile: filename }).code;
}

function loadTypeScript(module, filename) {
  module._compile(compiledCopy(filename) ?? compileWithEsbuild(filename), filename);
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
