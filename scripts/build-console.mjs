// Bundles the console's SQL editor (CodeMirror 6 and its SQL language) into
// dist/console/editor.js, one self-contained ES module the server serves from
// its own origin: the page never fetches code from elsewhere.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [path.join(root, 'src/console/editor/editor.mjs')],
  outfile: path.join(root, 'dist/console/editor.js'),
  bundle: true,
  format: 'esm',
  minify: true,
  target: 'es2022',
  legalComments: 'eof',
  logLevel: 'warning',
});
