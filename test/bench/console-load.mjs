/**
 * The console's page load on loopback with an empty cache: a fresh Chromium
 * profile per round (Debian's chromium, as the browser tests use; never a
 * downloaded one), time from navigation to body[data-ready] — the page, its
 * stylesheet, its modules and the bundled CodeMirror editor all fetched and
 * run. Target: under 1 s.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startSqlscribe } from './processes.mjs';

function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
}

/** Milliseconds per round, and the bytes of the editor bundle. */
export async function consoleLoad(work, rounds) {
  const dir = path.join(work, 'console');
  fs.mkdirSync(dir, { recursive: true });
  const server = await startSqlscribe(dir);
  const times = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-bench-chromium-'));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: chromiumPath(),
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        const page = await context.newPage();
        const started = performance.now();
        await page.goto(`${server.url}/#sql`);
        await page.waitForSelector('body[data-ready="true"] #sql-editor .cm-editor');
        times.push(performance.now() - started);
      } finally {
        await context.close();
        fs.rmSync(profile, { recursive: true, force: true });
      }
    }
    const bundle = await fetch(`${server.url}/console/editor.js`);
    return { times, bundleBytes: (await bundle.arrayBuffer()).byteLength };
  } finally {
    await server.stop();
  }
}
