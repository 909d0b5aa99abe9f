/**
 * The web console: `GET /` is its page, `GET /console/<file>` its stylesheet,
 * scripts and icon. The files are plain HTML, CSS and browser ES modules kept
 * in `src/console/static/` and served as they are, plus the one module it
 * shares with the server — the SQL splitter, built for the browser into
 * `dist/console/` (tsconfig.console.json) — and the SQL editor (CodeMirror),
 * bundled there by scripts/build-console.mjs. Nothing is fetched from
 * elsewhere at run time.
 *
 * This middleware runs before token authentication (src/app.ts): the page and
 * its assets hold no data, so a browser can load them and then ask the user for
 * the token. Every data endpoint still requires it. Only the files present in
 * the directory at start-up are served, by exact name: no path ever reaches the
 * file system.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

/** Where the console's assets are served from. */
export const CONSOLE_PREFIX = '/console/';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Same-origin everything: no inline script or style, no other host. The
 * console's SVG charts use presentation attributes, which this allows. The
 * page alone adds a nonce to style-src: the editor (CodeMirror) writes its
 * styles into <style> elements, and only those carrying this response's nonce
 * apply.
 */
export function contentSecurityPolicy(styleNonce?: string): string {
  const style = styleNonce === undefined ? "'self'" : `'self' 'nonce-${styleNonce}'`;
  return `default-src 'none'; script-src 'self'; style-src ${style}; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}

/** Where index.html leaves room for the nonce, which the page's scripts read from there. */
const NONCE_SLOT = '<meta name="csp-nonce" content="">';

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': contentSecurityPolicy(),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

interface Asset {
  type: string;
  body: Buffer;
}

/**
 * The package root: the nearest directory above `from` with a package.json.
 * Both `src/console/` (run from source) and `dist/src/console/` (built) find
 * the same root, so the static files are read from the source tree either way.
 */
export function packageRoot(from: string): string {
  let dir = from;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`sqlscribe: no package.json above ${from}`);
    dir = parent;
  }
}

/** The console's own files, and the server modules built for the browser. */
export function consoleDirectories(): string[] {
  const root = packageRoot(__dirname);
  return [path.join(root, 'src', 'console', 'static'), path.join(root, 'dist', 'console')];
}

/** Every servable file of the directory (one level, regular files with a known type), read once. */
export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    const file = path.join(dir, name);
    if (type === undefined || !/^[a-z0-9][a-z0-9._-]*$/.test(name) || !statSync(file).isFile()) continue;
    assets.set(name, { type, body: readFileSync(file) });
  }
  return assets;
}

/** Whether `path` is the console's (`/`, `/index.html`, `/console/*`): those are served by consoleRoutes. */
export function isConsolePath(path: string): boolean {
  return path === '/' || path === '/index.html' || path.startsWith(CONSOLE_PREFIX);
}

/** Koa middleware serving the console; register it before authentication. */
export function consoleRoutes(dirs: readonly string[] = consoleDirectories()) {
  const assets = new Map<string, Asset>(dirs.flatMap((dir) => (existsSync(dir) ? [...loadAssets(dir)] : [])));
  // The API does not depend on the console: without its files the service still serves, `/` is 404, and it says why.
  if (!assets.has('index.html'))
    process.stderr.write(`sqlscribe: the web console is not served: no index.html in ${dirs.join(' or ')}\n`);
  else if (!assets.has('editor.js'))
    process.stderr.write(
      `sqlscribe: the web console's SQL editor is missing (no editor.js in ${dirs.join(' or ')}): run npm run build\n`,
    );
  return async function serveConsole(ctx: Context, next: Next): Promise<void> {
    const name =
      ctx.path === '/' || ctx.path === '/index.html'
        ? 'index.html'
        : ctx.path.startsWith(CONSOLE_PREFIX)
          ? ctx.path.slice(CONSOLE_PREFIX.length)
          : undefined;
    if (name === undefined) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      // `/` and the assets are read-only; the catalog's answer for another method.
      ctx.set('Allow', 'GET, HEAD');
      throw new EngineError('METHOD_NOT_ALLOWED', { method: ctx.method, path: ctx.path });
    }
    const asset = assets.get(name);
    if (asset === undefined) throw new EngineError('ENDPOINT_NOT_FOUND', { method: ctx.method, path: ctx.path });
    ctx.set(SECURITY_HEADERS);
    ctx.status = 200;
    ctx.type = asset.type;
    if (name === 'index.html') {
      // A fresh nonce per response: a value an attacker could learn from an old page is worth nothing.
      const nonce = randomBytes(18).toString('base64');
      ctx.set('Content-Security-Policy', contentSecurityPolicy(nonce));
      ctx.body = asset.body.toString('utf8').replace(NONCE_SLOT, `<meta name="csp-nonce" content="${nonce}">`);
      return;
    }
    ctx.body = asset.body;
  };
}
