/**
 * The Class view as a list of students, in headless Chromium against the real
 * server with a class of thirty tokens (POST /tokens with a prefix): the
 * students by name, one compact line each, so that thirty fit in two screens
 * at 1366×768; a student's name opens that student's history (the History
 * view on the student's database, filtered to the student's token).
 * Build first.
 */
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  PROJECTOR_WIDE,
  SCREENSHOTS,
  axeViolations,
  enterToken,
  findChromium,
  launch,
  openConsole,
  serverIn,
  valueOnceSet,
} from './helpers/browser';

t.setTimeout(180_000);

const ADMIN = 'teacher-s3cret';
const admin = { 'X-Service-Token': ADMIN };

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('a class of thirty in the Class view', async (tt) => {
    const server = await serverIn(tt, ['-token', ADMIN]);
    const made = await server.post('/tokens', { prefix: 'alumno', count: 30, role: 'write' }, admin);
    tt.equal(made.status, 201, 'thirty tokens and their databases');
    const secrets = new Map<string, string>(
      (made.body.tokens as Array<{ name: string; secret: string }>).map((token) => [token.name, token.secret]),
    );
    const student = (name: string): Record<string, string> => ({ 'X-Service-Token': secrets.get(name) ?? '' });
    for (const name of ['alumno-07', 'alumno-23']) {
      tt.equal(
        (
          await server.post(
            '/exec',
            { db: name, sql: 'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)' },
            student(name),
          )
        ).status,
        200,
      );
      await server.post('/exec', { db: name, sql: 'INSERT INTO t VALUES (1)' }, student(name));
    }

    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/#teacher`);
    await page.setViewportSize(PROJECTOR_WIDE);
    await enterToken(page, ADMIN);
    await page.waitForSelector('#class-list tbody tr >> nth=29');

    await tt.test('thirty students by name, in two screens', async (t2) => {
      // The link's last text is the name on screen (before it, "History of " for screen readers).
      const names = await page
        .locator('#class-list tbody th .student-link')
        .evaluateAll((links) => links.map((link) => link.lastChild?.textContent));
      t2.same(
        names,
        Array.from({ length: 30 }, (_, n) => `alumno-${String(n + 1).padStart(2, '0')}`),
        'by name, in order',
      );
      const lastBottom = await page
        .locator('#class-list tbody tr')
        .nth(29)
        .evaluate((row) => row.getBoundingClientRect().bottom + window.scrollY);
      t2.ok(
        lastBottom <= 2 * PROJECTOR_WIDE.height,
        `the thirtieth ends at ${Math.round(lastBottom)}px of the page, within two screens (${2 * PROJECTOR_WIDE.height}px)`,
      );
      t2.match(
        await page.locator('#class-list tr[data-db="alumno-07.db"]').innerText(),
        /\[SQ3003\]/,
        'the newest error, with its code',
      );
      t2.same(
        (await axeViolations(page)).map((v) => `${v.id}: ${v.help}`),
        [],
        'axe: the class list',
      );
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-class-list-1366.png') });
    });

    await tt.test("a student's name opens that student's history", async (t2) => {
      await page.click('#class-list tr[data-db="alumno-07.db"] .student-link');
      await page.waitForSelector('#view-history:not([hidden])');
      t2.equal(await page.inputValue('#history-token'), 'alumno-07', 'filtered to the student');
      // The header's list of databases arrives with the view (GET /dbs): valueOnceSet waits for the student's.
      t2.equal(await valueOnceSet(page, '#db-select', 'alumno-07.db'), 'alumno-07.db', "on the student's database");
      t2.match(await page.locator('#history-h').innerText(), /History of alumno-07/);
      await page.waitForSelector('#history-list[data-db="alumno-07.db"] > li[data-state="failed"]');
      const who = await page.locator('#history-list .who').allInnerTexts();
      t2.ok(
        who.length >= 2 && who.every((name) => name === 'alumno-07'),
        `only the student's entries (${who.join(', ')})`,
      );
      t2.match(
        await page.locator('#history-list > li[data-state="failed"]').innerText(),
        /Failed\s*\[SQ3003\]/,
        'with the failure the Class view showed',
      );
    });
    tt.same(problems, [], server.stderr());
  });
}
