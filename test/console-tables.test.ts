/**
 * The console's result tables and sessions in headless Chromium (Debian's
 * chromium through playwright-core; never downloaded) against the real server:
 * the result comes into view after Run at projector sizes, full HD and 200%
 * zoom with a compact session panel; a header click sorts and shows the
 * ORDER BY; filter; paging; values by type (FLOAT 7.0, NULL against 'NULL',
 * booleans, blobs); a foreign key opens the referenced row; CSV and JSON
 * downloads; the Data view reads through an open session and says so; axe.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  PROJECTOR_SMALL,
  PROJECTOR_WIDE,
  SCREENSHOTS,
  axeViolations,
  findChromium,
  launch,
  openConsole,
  runSql,
  serverIn,
  sidewaysOverflow,
  text,
  waitForText,
} from './helpers/browser';

t.setTimeout(180_000);

const FULL_HD = { width: 1920, height: 1080 };
const MARKS = 120;

/** 120 marks: id 1 scores the FLOAT 7.0 and has a NULL note and a blob, id 2 the text 'NULL'; every other score is id + 0.5. */
function marksSql(): string {
  const rows = Array.from({ length: MARKS }, (_, n) => {
    const id = n + 1;
    const score = id === 1 ? '7.0' : `${id}.5`;
    const note = id === 1 ? 'NULL' : id === 2 ? "'NULL'" : `'note ${id}'`;
    return `(${id}, 'P${id}', ${score}, ${id % 2 === 0 ? 'TRUE' : 'FALSE'}, ${note}, ${id === 1 ? "X'0102'" : 'NULL'}, ${id % 2 === 0 ? 2 : 1})`;
  });
  return [
    'CREATE TABLE teachers (id INT PRIMARY KEY, name TEXT NOT NULL)',
    "INSERT INTO teachers VALUES (1, 'Rosa'), (2, 'Tomás')",
    'CREATE TABLE marks (id INT PRIMARY KEY, pupil TEXT, score FLOAT, passed BOOL, note TEXT, photo BLOB, teacher INT REFERENCES teachers(id))',
    `INSERT INTO marks VALUES ${rows.join(', ')}`,
  ].join('; ');
}

/** Where an element is in the window: its top and bottom, and the window's height. */
function placeOf(page: Page, selector: string): Promise<{ top: number; bottom: number; height: number }> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const box = element.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom, height: window.innerHeight };
    });
}

async function columnTexts(page: Page, scope: string, column: number): Promise<string[]> {
  return page.locator(`${scope} tbody tr td:nth-child(${column})`).allInnerTexts();
}

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('result tables that teach, results in view, sessions you can see', async (tt) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const server = await serverIn(tt);
    tt.equal((await server.post('/dbs', { db: 'lab' })).status, 201, 'database created');
    const seeded = await server.exec('lab', marksSql());
    tt.equal(seeded.status, 200, JSON.stringify(seeded.body));
    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/#sql`);
    await page.waitForSelector('#view-sql:not([hidden])');
    await page.selectOption('#db-select', 'lab.db');

    tt.test('after Run the result is in view, the session panel stays one compact line', async (t2) => {
      await page.click('#tx-begin');
      await page.waitForSelector('#tx-state[data-state="active"]');
      const sizes = [
        { name: '1024×768', size: PROJECTOR_SMALL, zoom: 1 },
        { name: '1366×768', size: PROJECTOR_WIDE, zoom: 1 },
        { name: '1920×1080', size: FULL_HD, zoom: 1 },
        // 200% zoom of a 1366×768 projector: half as many CSS pixels each way, drawn at twice the density.
        { name: '1366×768 at 200%', size: PROJECTOR_WIDE, zoom: 2 },
      ];
      const cdp = await context.newCDPSession(page);
      for (const [i, { name, size, zoom }] of sizes.entries()) {
        const width = Math.floor(size.width / zoom);
        const height = Math.floor(size.height / zoom);
        await page.setViewportSize({ width, height });
        await cdp.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: zoom, mobile: false });
        await page.evaluate(() => window.scrollTo(0, 0));
        const panel = await placeOf(page, '.panel.tx');
        const lineHeight = await page.evaluate(() => parseFloat(getComputedStyle(document.body).fontSize));
        // One line of buttons (2.5rem) and the panel's padding; at 200% the same, in CSS pixels.
        t2.ok(
          panel.bottom - panel.top <= lineHeight * 4,
          `${name}: the session panel is one line (${Math.round(panel.bottom - panel.top)}px)`,
        );
        const editor = await placeOf(page, '#sql-input');
        t2.ok(
          editor.top >= panel.bottom && editor.top < editor.height - 20,
          `${name}: the editor starts on screen, below the panel (top ${Math.round(editor.top)} of ${editor.height})`,
        );
        if (zoom === 1 && size === PROJECTOR_SMALL)
          await page.screenshot({ path: path.join(SCREENSHOTS, 'console-session-1024.png') });
        await runSql(page, `SELECT id, pupil, score FROM marks WHERE id <= ${100 + i} ORDER BY id`);
        const result = await placeOf(page, '#results article.result');
        t2.ok(
          result.top >= 0 && result.top < result.height - 60,
          `${name}: the result's top is in view (${Math.round(result.top)} of ${result.height})`,
        );
        const firstRow = await placeOf(page, '#results tbody tr');
        t2.ok(firstRow.bottom <= firstRow.height, `${name}: its first row is in view`);
        t2.equal(await sidewaysOverflow(page), 0, `${name}: no sideways scroll of the page`);
      }
      await cdp.send('Emulation.clearDeviceMetricsOverride');
      await page.setViewportSize(PROJECTOR_WIDE);
      await runSql(page, 'SELECT nope FROM marks');
      const error = await placeOf(page, '#sql-error');
      t2.ok(error.top >= 0 && error.top < error.height - 40, 'an error comes into view the same way');
      await page.click('#tx-rollback');
      await page.waitForSelector('#tx-state[data-state="none"]');
    });

    tt.test('a header click sorts and shows the equivalent ORDER BY', async (t2) => {
      await runSql(page, 'SELECT id, pupil, score FROM marks WHERE id <= 4');
      t2.equal(await text(page, '#results .rt-order'), 'Click a column to sort by it.');
      const score = page.locator('#results thead th', { hasText: 'score' }).locator('button');
      await score.click();
      t2.same(await columnTexts(page, '#results', 3), ['2.5', '3.5', '4.5', '7.0'], 'ascending by score');
      t2.equal(await text(page, '#results .rt-order-sql'), 'ORDER BY score');
      t2.equal(await page.getAttribute('#results thead th:nth-child(3)', 'aria-sort'), 'ascending');
      await score.click();
      t2.same(await columnTexts(page, '#results', 3), ['7.0', '4.5', '3.5', '2.5'], 'descending');
      t2.equal(await text(page, '#results .rt-order-sql'), 'ORDER BY score DESC');
      await runSql(page, 'SELECT pupil, count(*) FROM marks GROUP BY pupil LIMIT 3');
      await page.locator('#results thead th:nth-child(2) button').click();
      t2.equal(await text(page, '#results .rt-order-sql'), 'ORDER BY 2', 'an expression is ordered by its position');
    });

    tt.test('the filter keeps the rows holding the text', async (t2) => {
      await runSql(page, 'SELECT id, pupil FROM marks ORDER BY id');
      await page.fill('#results .rt-filter', 'P11');
      t2.same(await columnTexts(page, '#results', 2), [
        'P11',
        'P110',
        'P111',
        'P112',
        'P113',
        'P114',
        'P115',
        'P116',
        'P117',
        'P118',
        'P119',
      ]);
      t2.equal(await text(page, '#results .rt-status'), 'Rows 1–11 of 11 (filtered from 120)');
      await page.fill('#results .rt-filter', '');
    });

    tt.test('a large result is shown page by page', async (t2) => {
      t2.equal(await text(page, '#results .rt-status'), 'Rows 1–50 of 120');
      t2.equal(await page.locator('#results tbody tr').count(), 50);
      await page.click('#results .rt-next');
      t2.equal(await text(page, '#results .rt-status'), 'Rows 51–100 of 120');
      t2.equal((await columnTexts(page, '#results', 1))[0], '51');
      await page.click('#results .rt-next');
      t2.equal(await text(page, '#results .rt-status'), 'Rows 101–120 of 120');
      t2.ok(await page.isDisabled('#results .rt-next'), 'no page after the last');
    });

    tt.test('values are shown by their type', async (t2) => {
      await runSql(page, 'SELECT score, note, passed, photo, score * 2 AS twice FROM marks WHERE id <= 2 ORDER BY id');
      const first = page.locator('#results tbody tr').nth(0).locator('td');
      const second = page.locator('#results tbody tr').nth(1).locator('td');
      t2.equal(await first.nth(0).innerText(), '7.0', 'FLOAT 7.0 stays 7.0');
      t2.equal(await first.nth(1).getAttribute('data-kind'), 'null', 'NULL is marked as NULL');
      t2.equal(await second.nth(1).getAttribute('data-kind'), 'text', "the text 'NULL' is text");
      t2.equal(await second.nth(1).innerText(), 'NULL');
      t2.not(
        await first.nth(1).evaluate((cell) => getComputedStyle(cell).fontStyle),
        await second.nth(1).evaluate((cell) => getComputedStyle(cell).fontStyle),
        'and they look different',
      );
      t2.equal(await first.nth(2).innerText(), 'false');
      t2.equal(await second.nth(2).innerText(), 'true');
      t2.equal(await first.nth(3).getAttribute('data-kind'), 'blob');
      t2.match(await first.nth(3).innerText(), /^base64\s+AQI=$/, 'a blob is base64, marked as such');
      t2.equal(
        await page.getAttribute('#results thead th:nth-child(1)', 'data-type'),
        'FLOAT',
        'the header names the type',
      );
      t2.equal(await page.getAttribute('#results thead th:nth-child(5)', 'data-type'), null, 'an expression has none');
    });

    tt.test('CSV and JSON downloads of the result shown', async (t2) => {
      await runSql(page, 'SELECT id, score, note, passed FROM marks WHERE id <= 3 ORDER BY id');
      await page.locator('#results thead th:nth-child(1) button').click();
      await page.locator('#results thead th:nth-child(1) button').click();
      const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#results .rt-csv')]);
      t2.equal(csv.suggestedFilename(), 'result-1.csv');
      t2.equal(
        readFileSync(await csv.path(), 'utf8'),
        'id,score,note,passed\r\n3,3.5,note 3,false\r\n2,2.5,NULL,true\r\n1,7.0,,false\r\n',
        'sorted as shown; NULL is an empty field, the text NULL is NULL',
      );
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#results .rt-json')]);
      t2.equal(json.suggestedFilename(), 'result-1.json');
      t2.same(JSON.parse(readFileSync(await json.path(), 'utf8')), [
        { id: 3, score: 3.5, note: 'note 3', passed: false },
        { id: 2, score: 2.5, note: 'NULL', passed: true },
        { id: 1, score: 7, note: null, passed: false },
      ]);
    });

    tt.test('axe: no serious or critical violations on the SQL view with results', async (t2) => {
      await runSql(page, 'SELECT * FROM marks ORDER BY id');
      await page.locator('#results thead th:nth-child(3) button').click();
      t2.same(await axeViolations(page), []);
      for (const [size, file] of [
        [PROJECTOR_SMALL, 'console-tables-1024.png'],
        [PROJECTOR_WIDE, 'console-tables-1366.png'],
      ] as const) {
        await page.setViewportSize(size);
        await page.locator('#results-h').scrollIntoViewIfNeeded();
        await page.evaluate(() =>
          document.getElementById('results')!.closest('section')!.scrollIntoView({ block: 'start' }),
        );
        await page.screenshot({ path: path.join(SCREENSHOTS, file) });
      }
      await page.setViewportSize(PROJECTOR_WIDE);
    });

    tt.test('the Data view sorts by re-querying with ORDER BY', async (t2) => {
      await page.click('nav [data-nav="data"]');
      await page
        .locator('article.table-card[data-table="marks"]')
        .getByRole('button', { name: 'Rows of marks' })
        .click();
      await waitForText(page, '#rows-status', 'Rows 1–25 of 120');
      t2.equal(await text(page, '#rows-source'), 'Committed data');
      t2.equal(await text(page, '#data-source'), 'Committed data');
      const score = page.locator('#rows thead th', { hasText: 'score' }).locator('button');
      await score.click();
      await page.waitForSelector('#rows thead th[aria-sort="ascending"]');
      t2.same(
        (await columnTexts(page, '#rows', 3)).slice(0, 7),
        ['2.5', '3.5', '4.5', '5.5', '6.5', '7.0', '7.5'],
        'the whole table, sorted',
      );
      await page.locator('#rows thead th', { hasText: 'score' }).locator('button').click();
      await page.waitForSelector('#rows thead th[aria-sort="descending"]');
      t2.equal((await columnTexts(page, '#rows', 3))[0], '120.5', 'the largest score of all pages comes first');
      t2.equal(await text(page, '#rows .rt-order-sql'), 'ORDER BY score DESC');
      t2.equal(await text(page, '#rows-status'), 'Rows 1–25 of 120');
      await page.click('#rows-pager [data-page="next"]');
      await waitForText(page, '#rows-status', 'Rows 26–50 of 120');
      t2.equal((await columnTexts(page, '#rows', 3))[0], '95.5', 'the next page keeps the order');
    });

    tt.test('the Data view filters all the rows, not just the page', async (t2) => {
      await page.fill('#rows .rt-filter', 'P11');
      await waitForText(page, '#rows-status', 'Rows 1–11 of 11 holding “P11”');
      t2.same(
        await columnTexts(page, '#rows', 2),
        ['P119', 'P118', 'P117', 'P116', 'P115', 'P114', 'P113', 'P112', 'P111', 'P110', 'P11'],
        'filtered by the server, still sorted',
      );
      t2.equal(
        await page.evaluate(() => document.activeElement?.classList.contains('rt-filter')),
        true,
        'the filter keeps the focus',
      );
      await page.fill('#rows .rt-filter', '');
      await waitForText(page, '#rows-status', 'Rows 1–25 of 120');
      await page.click('#rows-pager [data-page="next"]');
      await waitForText(page, '#rows-status', 'Rows 26–50 of 120');
    });

    tt.test('a foreign key opens the referenced row', async (t2) => {
      const link = page.locator('#rows tbody tr').first().locator('a.fk-link');
      t2.equal(await link.innerText(), '1', 'row 95 of marks has teacher 1');
      await link.click();
      await waitForText(page, '#rows-table', 'teachers');
      t2.equal(await text(page, '#rows-status'), 'Rows 1–1 of 1');
      t2.same(await page.locator('#rows tbody tr').allInnerTexts(), ['1\tRosa']);
      t2.match(await text(page, '#rows-where'), /where id = 1/);
      t2.same(await axeViolations(page), [], 'axe: no serious or critical violations on the Data view');
      await page.click('#rows-where button');
      await waitForText(page, '#rows-status', 'Rows 1–2 of 2');
    });

    tt.test('inside a session the Data view shows the uncommitted row and says so', async (t2) => {
      await page.click('nav [data-nav="sql"]');
      await page.click('#tx-begin');
      await page.waitForSelector('#tx-state[data-state="active"]');
      await runSql(page, "INSERT INTO teachers VALUES (3, 'Uma')");
      t2.equal(await text(page, '#results-source'), 'Inside your open transaction (not yet committed)');
      await page.click('nav [data-nav="data"]');
      await waitForText(page, '#rows-status', 'Rows 1–3 of 3');
      t2.same(await columnTexts(page, '#rows', 2), ['Rosa', 'Tomás', 'Uma'], 'the session sees its own insert');
      t2.equal(await text(page, '#rows-source'), 'Inside your open transaction (not yet committed)');
      t2.equal(await text(page, '#data-source'), 'Inside your open transaction (not yet committed)');
      t2.equal(
        (await server.exec('lab', 'SELECT count(*) FROM teachers')).body?.results?.[0]?.rows?.[0]?.[0],
        2,
        'not committed',
      );
      await page.click('nav [data-nav="sql"]');
      await page.click('#tx-rollback');
      await page.waitForSelector('#tx-state[data-state="none"]');
      await page.click('nav [data-nav="data"]');
      await waitForText(page, '#rows-status', 'Rows 1–2 of 2');
      t2.same(await columnTexts(page, '#rows', 2), ['Rosa', 'Tomás'], 'after rollback the row is gone');
      t2.equal(await text(page, '#rows-source'), 'Committed data');
    });

    tt.test('a table list read before a write never stands in for the one read after it', async (t2) => {
      t2.equal((await server.post('/dbs', { db: 'lab2' })).status, 201, 'a second database');
      const second = await openConsole(context, `${server.url}/#sql`);
      t2.teardown(() => second.page.close());
      const tablesText = (): Promise<string> =>
        second.page.evaluate(() => document.getElementById('tables')?.textContent ?? '');
      // The first read of lab2's tables is answered by the server at once (no tables yet) and handed to the
      // page only at the end, after the write; the reads after it pass straight through.
      let releaseFirst: () => void = () => {};
      const firstReleased = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstAnswered: () => void = () => {};
      const answered = new Promise<void>((resolve) => (firstAnswered = resolve));
      let firstDelivered: Promise<void> | undefined;
      let reads = 0;
      await second.page.route(/\/tables\?/, async (route) => {
        reads += 1;
        if (reads > 1) return route.continue();
        const response = await route.fetch();
        firstAnswered();
        firstDelivered = firstReleased.then(() => route.fulfill({ response }));
        await firstDelivered;
      });
      await second.page.selectOption('#db-select', 'lab2.db');
      await answered;
      await runSql(second.page, 'CREATE TABLE fresh (id INT)');
      await second.page.waitForFunction(() => document.getElementById('tables')?.textContent?.includes('fresh'));
      t2.ok(reads >= 2, `the write was followed by a read of its own (${reads} reads)`);
      const finished = second.page.waitForEvent('requestfinished', (request) => request.url().includes('/tables?'));
      releaseFirst();
      await firstDelivered;
      await finished;
      // The answer's JSON is read and the page's continuation runs in the tasks after it.
      await second.page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
      t2.match(await tablesText(), /fresh/, 'the list from before the write, answered last, is not shown');
      t2.same(second.problems, []);
    });

    tt.test('no script errors or CSP violations', async (t2) => {
      t2.same(problems, []);
    });
  });
}
