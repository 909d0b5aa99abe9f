/**
 * The History view and time travel in headless Chromium against
 * the real server: a student's database's history newest first, a failure
 * marked "Failed" with its code and message, who and when, the SQL as sent;
 * the filters for failed entries and for a person; paging with the server's
 * cursor; "Restore to before this" on a DELETE FROM Track shown first as a dry
 * run in words, then done (the rows are back); "Undo this restore", also
 * previewed (the rows are gone again); axe on the view and on both questions.
 * Writes the screenshots of docs/console.md's time-travel section. Build first.
 */
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  PROJECTOR_WIDE,
  SCREENSHOTS,
  axeViolations,
  findChromium,
  launch,
  openConsole,
  serverIn,
  text,
} from './helpers/browser';
import type { TestServer } from './helpers/server';

t.setTimeout(240_000);

const ADMIN = 'teacher-s3cret';
const admin = { 'X-Service-Token': ADMIN };
const TRACKS = 3503;

async function trackCount(server: TestServer): Promise<number> {
  return (await server.post('/exec', { db: 'alumno-07', sql: 'SELECT count(*) FROM Track' }, admin)).body.results[0]
    .rows[0][0] as number;
}

async function seriousViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page)).map((v) => `${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** The seqs of the timeline, top to bottom. */
function seqs(page: Page): Promise<number[]> {
  return page
    .locator('#history-list > li')
    .evaluateAll((items) => items.map((item) => Number((item as HTMLElement).dataset.seq)));
}

async function showHistory(page: Page, db: string): Promise<void> {
  await page.selectOption('#db-select', db);
  await page.waitForSelector(`#history-list[data-db="${db}"] > li`);
}

/** Waits until the timeline's top entry is a new one (after a restore). */
async function topChanged(page: Page, before: number): Promise<void> {
  await page.waitForFunction(
    (old) => Number((document.querySelector('#history-list > li') as HTMLElement | null)?.dataset.seq ?? 0) > old,
    before,
  );
}

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('history and time travel in the console', async (tt) => {
    const server = await serverIn(tt, ['-token', ADMIN]);
    tt.equal((await server.post('/dbs', { db: 'lesson' }, admin)).status, 201);
    const tracks = Array.from({ length: TRACKS }, (_, n) => `(${n + 1}, 'Track ${n + 1}')`).join(', ');
    tt.equal(
      (
        await server.post(
          '/exec',
          {
            db: 'lesson',
            sql: `CREATE TABLE Track (id INT PRIMARY KEY, name TEXT NOT NULL); INSERT INTO Track VALUES ${tracks}`,
          },
          admin,
        )
      ).status,
      200,
    );
    const made = await server.post('/tokens', { prefix: 'alumno', count: 8, role: 'write', from: 'lesson' }, admin);
    tt.equal(made.status, 201, 'a class of eight, each with a copy of the lesson');
    const secrets = new Map<string, string>(
      (made.body.tokens as Array<{ name: string; secret: string }>).map((token) => [token.name, token.secret]),
    );
    const as = (name: string): Record<string, string> => ({ 'X-Service-Token': secrets.get(name) ?? '' });
    const write = async (who: Record<string, string>, db: string, sql: string, status = 200): Promise<void> => {
      const reply = await server.post('/exec', { db, sql }, who);
      tt.equal(reply.status, status, `${sql}: ${reply.text.slice(0, 200)}`);
    };
    await write(as('alumno-07'), 'alumno-07', "UPDATE Track SET name = 'Mine' WHERE id = 2");
    await write(as('alumno-07'), 'alumno-07', "INSERT INTO Track VALUES (2, 'Again')", 400);
    await write(admin, 'alumno-07', "UPDATE Track SET name = 'Checked' WHERE id = 3");
    await write(as('alumno-07'), 'alumno-07', 'DELETE FROM Track');
    await write(as('alumno-07'), 'alumno-07', "INSERT INTO Track VALUES (1, 'only')");
    for (let n = 0; n < 60; n++)
      await write(as('alumno-08'), 'alumno-08', `INSERT INTO Track VALUES (${10_000 + n}, 'n${n}')`);

    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/#history`);
    await page.setViewportSize(PROJECTOR_WIDE);
    await page.waitForSelector('#token-dialog[open]');
    await page.fill('#token-input', ADMIN);
    await page.press('#token-input', 'Enter');
    await page.waitForSelector('#view-history:not([hidden])');
    await showHistory(page, 'alumno-07.db');

    await tt.test('the timeline: newest first, who, when, the SQL, a failure in words', async (t2) => {
      const order = await seqs(page);
      t2.same(
        order,
        [...order].sort((a, b) => b - a),
        'newest first',
      );
      const failed = page.locator('#history-list > li[data-state="failed"]');
      t2.equal(await failed.count(), 1);
      const failure = await failed.innerText();
      t2.match(
        failure,
        /Failed\s*\[SQ3003\]\s*PRIMARY KEY constraint failed: Track\.id/,
        'marked with the word, its code and its message',
      );
      t2.match(failure, /alumno-07/, 'who');
      t2.match(failure, /INSERT INTO Track VALUES \(2, 'Again'\)/, 'the SQL as sent');
      t2.ok(await failed.locator('time[datetime]').count(), 'when');
      t2.equal(await failed.locator('button').count(), 0, 'nothing to restore before a failure');
      const deleted = page.locator('#history-list > li', { hasText: 'DELETE FROM Track' });
      t2.match(await deleted.innerText(), new RegExp(`OK · ${TRACKS.toLocaleString('en-US')} rows changed`));
      t2.same(await seriousViolations(page), [], 'axe: the History view');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-history-1366.png') });
    });

    await tt.test('filters: failed entries only, one person', async (t2) => {
      await page.check('#history-failed');
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#history-list > li')).every(
          (li) => (li as HTMLElement).dataset.state === 'failed',
        ),
      );
      t2.equal(await page.locator('#history-list > li').count(), 1, 'only the failure');
      await page.uncheck('#history-failed');
      await page.fill('#history-token', 'admin');
      await page.click('#history-filters button[type="submit"]');
      await page.waitForFunction(
        () => !(document.getElementById('history-list')?.innerText ?? '').includes('alumno-07'),
      );
      const who = await page.locator('#history-list .who').allInnerTexts();
      t2.ok(who.length > 0 && who.every((name) => name === 'admin'), `only admin's entries (${who.join(', ')})`);
      t2.match(await text(page, '#history-status'), /by admin/);
      await page.fill('#history-token', '');
      await page.click('#history-filters button[type="submit"]');
      await page.waitForSelector('#history-list > li[data-state="failed"]');
    });

    await tt.test("pages with the server's cursor", async (t2) => {
      await showHistory(page, 'alumno-08.db');
      await page.waitForFunction(() => document.querySelectorAll('#history-list > li').length === 50);
      const first = await seqs(page);
      t2.ok(await page.isEnabled('#history-older'), 'an older page');
      t2.ok(await page.isDisabled('#history-newer'));
      await page.click('#history-older');
      await page.waitForFunction(
        (top) => Number((document.querySelector('#history-list > li') as HTMLElement).dataset.seq) < top,
        first[first.length - 1] ?? 0,
      );
      const second = await seqs(page);
      t2.ok(
        second.length >= 10 && (second[0] ?? 0) < (first[first.length - 1] ?? 0),
        `the next ${second.length}, older than the first page`,
      );
      await page.click('#history-newer');
      await page.waitForFunction(
        (top) => Number((document.querySelector('#history-list > li') as HTMLElement).dataset.seq) === top,
        first[0] ?? 0,
      );
      t2.same(await seqs(page), first, 'back to the newest page');
    });

    await tt.test('restore to before the DELETE: previewed in words, then done', async (t2) => {
      await showHistory(page, 'alumno-07.db');
      const top = (await seqs(page))[0] ?? 0;
      await page
        .locator('#history-list > li', { hasText: 'DELETE FROM Track' })
        .locator('button.restore-before')
        .click();
      await page.waitForSelector('#confirm-dialog[open] #restore-summary');
      const summary = await text(page, '#restore-summary');
      t2.match(
        summary,
        new RegExp(
          `undoes 2 statements by alumno-07 since \\d{1,2}:\\d{2}.*: DELETE FROM Track \\(${TRACKS.toLocaleString('en-US')} rows\\), INSERT INTO Track VALUES \\(1, 'only'\\) \\(1 row\\)`,
        ),
      );
      t2.equal(await page.locator('#confirm-body .restore-undone li').count(), 2, 'each undone statement listed');
      t2.same(await seriousViolations(page), [], 'axe: the restore preview');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-restore-preview-1366.png') });
      t2.equal(await trackCount(server), 1, 'a dry run changes nothing');
      await page.click('#confirm-ok');
      await topChanged(page, top);
      const restore = page.locator('#history-list > li').first();
      t2.equal(await restore.getAttribute('data-kind'), 'restoredb', 'the restore is on the timeline');
      t2.match(await restore.innerText(), /Restore/);
      t2.ok(await restore.locator('button.undo-restore').isVisible(), 'with "Undo this restore"');
      t2.equal(await trackCount(server), TRACKS, 'the rows are back');
      t2.same(await seriousViolations(page), [], 'axe: the timeline with a restore');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-undo-restore-1366.png') });
    });

    await tt.test('undo the restore: previewed, then done', async (t2) => {
      const top = (await seqs(page))[0] ?? 0;
      await page.locator('#history-list > li').first().locator('button.undo-restore').click();
      await page.waitForSelector('#confirm-dialog[open] #restore-summary');
      t2.match(await text(page, '#confirm-h'), new RegExp(`Undo restore #${top} of alumno-07\\?`));
      t2.match(await text(page, '#restore-summary'), /undoes 1 statement by admin/);
      await page.click('#confirm-ok');
      await topChanged(page, top);
      t2.equal(await trackCount(server), 1, 'the DELETE and the INSERT hold again');
    });
    tt.same(problems, [], server.stderr());
  });
}
