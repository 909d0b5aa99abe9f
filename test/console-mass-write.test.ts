/**
 * The console asks before an UPDATE or DELETE without WHERE, in headless
 * Chromium against the real server: the question names the table and how many
 * rows it holds (counted with a read-only SELECT count(*)), a statement inside
 * a batch counts, Cancel sends nothing, "Run anyway" runs it, a WHERE is
 * never asked about, and axe finds no serious violation on the question.
 * Writes the screenshot of the question for docs/console.md. Build first.
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
  runSql,
  serverIn,
  setEditorText,
  text,
} from './helpers/browser';
import type { TestServer } from './helpers/server';

t.setTimeout(180_000);

async function count(server: TestServer, table: string): Promise<number> {
  const answer = await server.exec('shop', `SELECT count(*) FROM ${table}`);
  return answer.body.results[0].rows[0][0] as number;
}

/** Presses Run and waits for the question. */
async function runAndAsk(page: Page, sql: string): Promise<void> {
  await setEditorText(page, sql);
  await page.click('#sql-run');
  await page.waitForSelector('#confirm-dialog[open]');
}

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('a write to every row is asked about first', async (tt) => {
    const server = await serverIn(tt);
    tt.equal((await server.post('/dbs', { db: 'shop' })).status, 201);
    const rows = Array.from({ length: 1203 }, (_, n) => `(${n + 1}, 'T${n + 1}')`).join(', ');
    const seeded = await server.exec(
      'shop',
      `CREATE TABLE Track (id INT PRIMARY KEY, name TEXT); INSERT INTO Track VALUES ${rows}; CREATE TABLE "Play list" (id INT PRIMARY KEY); INSERT INTO "Play list" VALUES (1), (2)`,
    );
    tt.equal(seeded.status, 200, seeded.text);
    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/#sql`);
    await page.setViewportSize(PROJECTOR_WIDE);
    await page.waitForSelector('#view-sql:not([hidden])');
    await page.selectOption('#db-select', 'shop.db');

    await tt.test('the question names the table and its rows; Cancel sends nothing', async (t2) => {
      await runAndAsk(page, 'SELECT 1;\nDELETE FROM Track');
      t2.equal(await text(page, '#confirm-h'), 'Change every row of Track?');
      t2.match(
        await text(page, '#confirm-body'),
        /Statement 2: DELETE FROM Track\s+has no WHERE: it deletes all 1,203 rows of Track\./,
      );
      t2.equal(await page.evaluate(() => document.activeElement?.id), 'confirm-cancel', 'Cancel has the focus');
      t2.same(
        (await axeViolations(page)).map((v) => `${v.id}: ${v.help}`),
        [],
        'axe: the question',
      );
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-mass-delete-1366.png') });
      await page.keyboard.press('Escape');
      await page.waitForSelector('#sql-cancelled');
      t2.equal(await count(server, 'Track'), 1203, 'nothing was sent');
      t2.notOk(await page.locator('#confirm-dialog').evaluate((dialog) => (dialog as HTMLDialogElement).open));
      await runAndAsk(page, 'DELETE FROM Track');
      await page.click('#confirm-cancel');
      await page.waitForSelector('#sql-cancelled');
      t2.equal(await count(server, 'Track'), 1203, 'Cancel sends nothing either');
    });

    await tt.test('an UPDATE inside a batch, a quoted name, Run anyway', async (t2) => {
      await runAndAsk(
        page,
        'UPDATE Track SET name = upper(name) WHERE id = 1;\nUPDATE "Play list" SET id = id + 10;\nSELECT 2',
      );
      const item = page.locator('#confirm-body li');
      t2.equal(await item.count(), 1, 'only the statement without WHERE');
      t2.match(await item.innerText(), /Statement 2: .*changes all 2 rows of Play list/s);
      t2.equal(await item.getAttribute('data-rows'), '2');
      await page.click('#confirm-ok');
      await page.waitForSelector('#results article.result >> nth=2');
      t2.same(
        (await server.exec('shop', 'SELECT id FROM "Play list" ORDER BY id')).body.results[0].rows,
        [[11], [12]],
        'sent after Run anyway',
      );
    });

    await tt.test('a WHERE, even always true, and a subquery WHERE in UPDATE are told apart', async (t2) => {
      await runSql(page, 'DELETE FROM Track WHERE id > 1200');
      t2.equal(await count(server, 'Track'), 1200, 'no question with a WHERE');
      await runAndAsk(page, 'UPDATE Track SET name = (SELECT name FROM Track AS o WHERE o.id = 1)');
      t2.match(await text(page, '#confirm-body'), /changes all 1,200 rows of Track/);
      await page.click('#confirm-cancel');
      await page.waitForSelector('#sql-cancelled');
    });
    tt.same(problems, [], server.stderr());
  });
}
