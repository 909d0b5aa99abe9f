/**
 * After Run at 1366×768 the statements and the start of their result are in
 * view together (the editor used to scroll away), measured with
 * bounding boxes in headless Chromium against the real server: a short and a
 * long result, a run started from far down the page, an error, and with a
 * transaction open. Build first.
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { PROJECTOR_WIDE, findChromium, launch, openConsole, runSql, serverIn } from './helpers/browser';

t.setTimeout(180_000);

interface Box {
  top: number;
  bottom: number;
}

async function boxes(page: Page, startSelector: string): Promise<{ editor: Box; start: Box; height: number }> {
  return page.evaluate((selector) => {
    const place = (element: Element | null): Box => {
      const box = element?.getBoundingClientRect();
      return { top: box?.top ?? NaN, bottom: box?.bottom ?? NaN };
    };
    return {
      editor: place(document.querySelector('#sql-editor')),
      start: place(document.querySelector(selector)),
      height: window.innerHeight,
    };
  }, startSelector);
}

/** The whole editor (every line of the statements) and `startSelector` lie inside the window. */
async function bothInView(t2: Test, page: Page, startSelector: string, what: string): Promise<void> {
  const { editor, start, height } = await boxes(page, startSelector);
  t2.ok(
    editor.top >= 0 && editor.bottom <= height,
    `${what}: the statements are in view (${Math.round(editor.top)}–${Math.round(editor.bottom)} of ${height})`,
  );
  t2.ok(
    start.top >= 0 && start.bottom <= height,
    `${what}: the start of the result is in view (${Math.round(start.top)}–${Math.round(start.bottom)} of ${height})`,
  );
}

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('the statements and their result, together in view at 1366×768', async (tt) => {
    const server = await serverIn(tt);
    tt.equal((await server.post('/dbs', { db: 'lab' })).status, 201);
    const rows = Array.from({ length: 200 }, (_, n) => `(${n + 1}, 'P${n + 1}')`).join(', ');
    tt.equal(
      (
        await server.exec(
          'lab',
          `CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT); INSERT INTO pupils VALUES ${rows}`,
        )
      ).status,
      200,
    );
    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/#sql`);
    await page.setViewportSize(PROJECTOR_WIDE);
    await page.waitForSelector('#view-sql:not([hidden])');
    await page.selectOption('#db-select', 'lab.db');

    await tt.test('a long result: the first rows below the query', async (t2) => {
      await runSql(page, 'SELECT id, name\nFROM pupils\nWHERE id <= 150\nORDER BY id');
      await bothInView(t2, page, '#results article.result h3', 'its heading');
      await bothInView(t2, page, '#results tbody tr', 'its first row');
    });

    await tt.test('a run started from the bottom of the page brings the query back', async (t2) => {
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await runSql(page, 'SELECT id, name FROM pupils WHERE id <= 120 ORDER BY id DESC');
      await bothInView(t2, page, '#results tbody tr', 'from the bottom');
    });

    await tt.test('a short result and an error', async (t2) => {
      await runSql(page, "INSERT INTO pupils VALUES (1001, 'New');\nSELECT count(*) FROM pupils");
      await bothInView(t2, page, '#results article.result:last-child tbody tr', 'a batch');
      await runSql(page, 'SELECT nope FROM pupils');
      await bothInView(t2, page, '#sql-error > p:first-child', 'an error');
    });

    await tt.test('with a transaction open and nine lines of SQL', async (t2) => {
      await page.click('#tx-begin');
      await page.waitForSelector('#tx-state[data-state="active"]');
      await runSql(
        page,
        [
          'SELECT id,',
          '  name',
          'FROM pupils',
          'WHERE id <= 100',
          '  AND id > 0',
          '  AND name IS NOT NULL',
          'ORDER BY',
          '  id',
          'LIMIT 100',
        ].join('\n'),
      );
      await bothInView(t2, page, '#results tbody tr', 'in a session');
      await page.click('#tx-rollback');
      await page.waitForSelector('#tx-state[data-state="none"]');
    });
    tt.same(problems, [], server.stderr());
  });
}
