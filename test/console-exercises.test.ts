/**
 * Exercises in the console, in Debian's Chromium against a real server:
 *
 * - a student opens the Exercises view, reads the prompt (Markdown drawn
 *   safely: no markup from the prompt), checks wrong answers and sees why
 *   (a column not asked for, a missing row, the order, an engine error), then
 *   a right answer written differently, and sees it marked solved;
 * - another browser with the same token (no storage in common) shows the
 *   same solved marks and count: they are the server's, not the tab's;
 * - no response the student's page receives holds a solution or a check;
 * - the teacher's progress grid updates live when a student's attempt
 *   arrives, offers the gradebook as CSV and counts students per evidence
 *   level;
 * - the teacher writes an exercise, tries its solution (the template does
 *   not change, even for a solution that writes), saves and deletes it;
 * - axe finds no serious or critical violation on either view.
 *
 * Screenshots at projector sizes go to test/screenshots/. Build first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import {
  PHONE,
  PROJECTOR_SMALL,
  PROJECTOR_WIDE,
  SCREENSHOTS,
  axeViolations,
  completionLabels,
  enterToken,
  findChromium,
  launch,
  openConsole,
  serverIn,
  sidewaysOverflow,
  waitForText,
} from './helpers/browser';

t.setTimeout(240_000);

const ADMIN = 'teacher-s3cret';
const admin = { 'X-Service-Token': ADMIN };

const EXERCISES = [
  {
    id: 'cheap-items',
    set: 'lesson-a',
    position: 1,
    title: 'Cheap items',
    template: 'shop',
    prompt: 'List the **names** of the items cheaper than `5`.\n\n- one column\n- any order\n\n<b>not markup</b>',
    solution: 'SELECT name FROM items WHERE price < 5 -- sol-mark-1',
    showRows: true,
  },
  {
    id: 'by-price',
    set: 'lesson-a',
    position: 2,
    title: 'Items by price',
    template: 'shop',
    prompt: 'Names and prices, *cheapest first*.',
    solution: 'SELECT name, price FROM items ORDER BY price, name -- sol-mark-2',
    order: 'exact',
  },
  {
    id: 'double-first',
    set: 'lesson-a',
    position: 3,
    title: 'Double a price',
    template: 'shop',
    prompt: 'Double the price of item 1.',
    solution: 'UPDATE items SET price = price * 2 WHERE id = 1 -- sol-mark-3',
    check: 'SELECT id, price FROM items ORDER BY id -- check-mark-3',
  },
];
const SECRETS = ['sol-mark', 'check-mark', 'WHERE price < 5', 'ORDER BY price, name', 'price * 2'];

async function seriousViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page)).map((v) => `${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** Puts `sql` in the Exercises view's editor through the handle the page keeps. */
async function setAnswer(page: Page, sql: string): Promise<void> {
  await page.evaluate((text) => {
    (
      document.getElementById('exercise-editor') as unknown as { sqlEditor: { setText(t: string): void } }
    ).sqlEditor.setText(text);
  }, sql);
}

/** Checks `sql` and waits for the new feedback. */
async function checkAnswer(page: Page, sql: string): Promise<string> {
  const before = await page.locator('#exercise-feedback').innerHTML();
  await setAnswer(page, sql);
  await page.click('#exercise-check');
  await page.waitForFunction(
    (old) =>
      document.getElementById('exercise-feedback')!.innerHTML !== old &&
      !(document.getElementById('exercise-check') as HTMLButtonElement).disabled,
    before,
  );
  return (await page.locator('#exercise-feedback').innerText()).trim();
}

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail("chromium is missing: the browser tests need Debian's chromium, or CHROMIUM_PATH naming a Chromium binary");
} else {
  const executablePath = chromiumPath;

  t.test('exercises in the console: a student checks, the teacher watches and writes', async (tt) => {
    const server = await serverIn(tt, ['-token', ADMIN]);
    tt.equal((await server.post('/dbs', { db: 'shop' }, admin)).status, 201);
    const made = await server.post(
      '/exec',
      {
        db: 'shop',
        sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);\nINSERT INTO items VALUES (1, 'pen', 2), (2, 'book', 12), (3, 'cup', 4), (4, 'lamp', 25), (5, 'clip', 1)",
      },
      admin,
    );
    tt.equal(made.status, 200, made.text);
    for (const exercise of EXERCISES) {
      const saved = await server.post('/exercises', exercise, admin);
      tt.equal(saved.status, 201, saved.text);
    }
    const tokens = await server.post('/tokens', { prefix: 'alumno', count: 2, role: 'write' }, admin);
    tt.equal(tokens.status, 201, tokens.text);
    const secrets = new Map<string, string>(
      (tokens.body.tokens as Array<{ name: string; secret: string }>).map((token) => [token.name, token.secret]),
    );
    const shopBefore = (await server.post('/exec', { db: 'shop', sql: 'SELECT * FROM items ORDER BY id' }, admin)).body
      .results[0].rows;

    const context = await launch(tt, executablePath);
    const student = await openConsole(context, `${server.url}/#exercises`);
    const page = student.page;
    // Every body the student's page receives, to look for solutions and checks in.
    const received: Promise<string>[] = [];
    page.on('response', (response) => received.push(response.text().catch(() => '')));
    await page.setViewportSize(PROJECTOR_SMALL);
    await enterToken(page, secrets.get('alumno-01') ?? '');

    await tt.test('the tasks in order and the prompt drawn safely', async (t2) => {
      await page.waitForSelector('#exercise-list li[data-id="double-first"]');
      t2.same(
        await page
          .locator('#exercise-list li')
          .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.id)),
        ['cheap-items', 'by-price', 'double-first'],
      );
      await waitForText(page, '#exercise-title', 'Cheap items');
      t2.equal(await page.locator('#exercise-prompt strong').innerText(), 'names');
      t2.equal(await page.locator('#exercise-prompt code').innerText(), '5');
      t2.equal(await page.locator('#exercise-prompt ul li').count(), 2, 'a list');
      t2.equal(await page.locator('#exercise-prompt b').count(), 0, 'no markup from the prompt');
      t2.match(await page.locator('#exercise-prompt').innerText(), /<b>not markup<\/b>/, 'shown as text');
      await page.waitForFunction(() => /items/.test(document.getElementById('exercise-tables')!.textContent ?? ''));
      t2.match(
        await page.locator('#exercise-tables').innerText(),
        /Tables: items/,
        "the template's tables, for completion",
      );
      await setAnswer(page, ' FROM items');
      await page.focus('#exercise-input');
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('SELECT ');
      await page.keyboard.press('Control+Space');
      // Typing SELECT opens the keyword list; read the list once the template's columns are in it.
      const labels = await completionLabels(page, ['id', 'name', 'price']);
      for (const column of ['id', 'name', 'price'])
        t2.ok(labels.includes(column), `the editor completes ${column} (${labels.join(', ')})`);
      await page.keyboard.press('Escape');
    });

    await tt.test('wrong answers, then a right one written differently', async (t2) => {
      let feedback = await checkAnswer(page, 'SELECT name, price FROM items WHERE price < 5');
      t2.equal(await page.getAttribute('#exercise-verdict', 'data-correct'), 'false');
      t2.match(feedback, /✗ Not yet/);
      t2.match(feedback, /Column not asked for: price/);

      feedback = await checkAnswer(page, 'SELECT name FROM items WHERE price < 3');
      t2.match(feedback, /Expected 3 rows; your answer gave 2 rows/);
      t2.match(
        await page.locator('#feedback-missing').innerText(),
        /A row your answer is missing[\s\S]*cup/,
        'the first missing row, as the exercise allows',
      );

      feedback = await checkAnswer(page, 'SELECT i.name AS n FROM items AS i WHERE i.price < 5');
      t2.equal(await page.getAttribute('#exercise-verdict', 'data-correct'), 'true');
      t2.match(feedback, /✓ Correct/);
      await page.waitForSelector('#exercise-list li[data-id="cheap-items"][data-solved="true"]');
      t2.match(
        await page.locator('#exercise-list li[data-id="cheap-items"]').innerText(),
        /✓[\s\S]*solved/,
        'the solved mark, in words',
      );
      t2.match(await page.locator('#exercise-summary').innerText(), /1 of 3 solved/);

      await page.click('#exercise-list li[data-id="by-price"] button');
      await waitForText(page, '#exercise-title', 'Items by price');
      t2.match(await page.locator('#exercise-rules').innerText(), /order of the rows matters/);
      feedback = await checkAnswer(page, 'SELECT name, price FROM items ORDER BY price DESC');
      t2.match(feedback, /the order matters here/);
      t2.same(await seriousViolations(page), [], 'axe: the Exercises view with feedback');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-exercises-1024.png') });

      feedback = await checkAnswer(page, 'SELECT name, price FROM items;\nSELEC name FROM items');
      t2.match(
        await page.locator('#exercise-error').innerText(),
        /\[SQ\d{4}\][\s\S]*Failed at statement 2/,
        'the engine error, as the SQL view shows it',
      );
      t2.equal(
        (await page.locator('#exercise-editor .cm-failed').count()) > 0,
        true,
        'the failing statement is marked in the editor',
      );

      await page.click('#exercise-list li[data-id="double-first"] button');
      await waitForText(page, '#exercise-title', 'Double a price');
      feedback = await checkAnswer(page, 'UPDATE items SET price = 4 WHERE id = 1;\nDELETE FROM items WHERE id = 5');
      t2.match(feedback, /✗ Not yet/);
      feedback = await checkAnswer(page, "UPDATE items SET price = 4 WHERE name = 'pen'");
      t2.match(feedback, /✓ Correct/, 'a task that changes data, judged through its check');
      await page.setViewportSize(PROJECTOR_WIDE);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-exercises-1366.png') });
      t2.same(await seriousViolations(page), [], 'axe: a right answer');
      await page.setViewportSize(PHONE);
      t2.equal(await sidewaysOverflow(page), 0, 'the page does not scroll sideways on a phone');
    });

    await tt.test('another browser with the same token shows the same solved marks', async (t2) => {
      // A browser of its own: nothing in its storage, so the marks can only come from the server.
      const elsewhere = await openConsole(await launch(t2, executablePath), `${server.url}/#exercises`);
      const other = elsewhere.page;
      other.on('response', (response) => received.push(response.text().catch(() => '')));
      await other.setViewportSize(PROJECTOR_SMALL);
      await enterToken(other, secrets.get('alumno-01') ?? '');
      await other.waitForSelector('#exercise-list li[data-id="double-first"][data-solved="true"]');
      t2.same(
        await other
          .locator('#exercise-list li')
          .evaluateAll((items) =>
            items.map((item) => [(item as HTMLElement).dataset.id, (item as HTMLElement).dataset.solved]),
          ),
        [
          ['cheap-items', 'true'],
          ['by-price', 'false'],
          ['double-first', 'true'],
        ],
        'solved in the first browser, tried but not solved, solved',
      );
      t2.match(
        await other.locator('#exercise-list li[data-id="cheap-items"]').innerText(),
        /✓[\s\S]*solved/,
        'the solved mark, in words',
      );
      t2.match(await other.locator('#exercise-summary').innerText(), /2 of 3 solved/, 'the count, from the server');
      t2.same(elsewhere.problems, [], server.stderr());
    });

    const teacher = await openConsole(context, `${server.url}/#lesson`);
    const lesson = teacher.page;
    await lesson.setViewportSize(PROJECTOR_WIDE);
    await enterToken(lesson, ADMIN);

    await tt.test('the progress grid, live', async (t2) => {
      await lesson.waitForSelector('#nav-lesson', { state: 'visible' });
      await lesson.waitForSelector(
        '#progress-grid tr[data-token="alumno-01"] td[data-exercise="cheap-items"][data-state="solved"]',
      );
      t2.match(
        await lesson.locator('#progress-grid tr[data-token="alumno-01"] td[data-exercise="cheap-items"]').innerText(),
        /✓ solved 3×/,
        'a word and a symbol, with the attempts',
      );
      t2.match(
        await lesson.locator('#progress-grid tr[data-token="alumno-01"] td[data-exercise="by-price"]').innerText(),
        /✗ tried 2×/,
      );
      t2.match(
        await lesson.locator('#progress-grid tr[data-token="alumno-02"] td[data-exercise="cheap-items"]').innerText(),
        /not tried/,
      );
      await lesson.waitForSelector('#progress-live[data-state="live"]');

      // A student's attempts arrive while the teacher watches: no click, the grid follows the journal.
      const other = { 'X-Service-Token': secrets.get('alumno-02') ?? '' };
      tt.equal(
        (await server.post('/exercises/cheap-items/check', { sql: 'SELECT name FROM items' }, other)).status,
        200,
      );
      await lesson.waitForSelector(
        '#progress-grid tr[data-token="alumno-02"] td[data-exercise="cheap-items"][data-state="tried"]',
      );
      for (let i = 0; i < 2; i++) await server.post('/exercises/cheap-items/check', { sql: 'SELECT 1' }, other);
      await lesson.waitForSelector(
        '#progress-grid tr[data-token="alumno-02"] td[data-exercise="cheap-items"][data-state="stuck"]',
      );
      t2.match(
        await lesson.locator('#progress-grid tr[data-token="alumno-02"] td[data-exercise="cheap-items"]').innerText(),
        /⚠ stuck 3×/,
      );
      t2.match(await lesson.locator('#progress-summary').innerText(), /2 students, 3 exercises; 1 stuck/);

      const counts = await lesson.locator('#evidence-counts').innerText();
      t2.match(counts, /Aún no observable\s+1/, 'alumno-02 solved none');
      t2.match(counts, /En desarrollo\s+0/);
      t2.match(counts, /Logrado\s+1/, 'alumno-01 solved 2 of 3');
      t2.match(counts, /Profundizado\s+0/);

      t2.match(
        (await lesson.getAttribute('#progress-csv', 'href')) ?? '',
        /\/exercises\/progress\?set=lesson-a&format=csv/,
      );
      const [download] = await Promise.all([lesson.waitForEvent('download'), lesson.click('#progress-csv')]);
      const csv = readFileSync(await download.path(), 'utf8');
      t2.match(csv, /^token,solved,attempts,cheap-items,by-price,double-first\r\nalumno-01,2,/, 'the gradebook');

      t2.same(await seriousViolations(lesson), [], 'axe: the Lesson view');
      await lesson.setViewportSize(PHONE);
      t2.equal(await sidewaysOverflow(lesson), 0, 'the grid scrolls in its own box on a phone');
      await lesson.setViewportSize(PROJECTOR_WIDE);
      await lesson.screenshot({ path: path.join(SCREENSHOTS, 'console-lesson-1366.png') });
    });

    await tt.test('the teacher writes an exercise and tries its solution', async (t2) => {
      await lesson.setViewportSize(PROJECTOR_SMALL);
      await lesson.fill('#ex-id', 'dear-items');
      await lesson.fill('#ex-set', 'lesson-a');
      await lesson.fill('#ex-title', 'Dear items');
      await lesson.fill('#ex-prompt', 'Items of **5 or more**.');
      await lesson.selectOption('#ex-template', 'shop.db');
      await lesson.fill('#ex-solution', 'UPDATE items SET price = 0 WHERE id = 2');
      await lesson.fill('#ex-check', 'SELECT id, price FROM items ORDER BY id');
      await lesson.click('#ex-try');
      await waitForText(lesson, '#ex-try-result', /rolled back: nothing changed/);
      t2.match(
        await lesson.locator('#ex-try-result').innerText(),
        /The check's result after the solution[\s\S]*2\s+0[\s\S]*5 rows/,
      );
      const shopNow = (await server.post('/exec', { db: 'shop', sql: 'SELECT * FROM items ORDER BY id' }, admin)).body
        .results[0].rows;
      t2.same(shopNow, shopBefore, 'the template did not change');

      await lesson.fill('#ex-check', '');
      await lesson.fill('#ex-solution', 'SELECT name FROM items WHERE price >= 5');
      await lesson.click('#ex-try');
      await waitForText(lesson, '#ex-try-result', /The solution's result[\s\S]*book[\s\S]*2 rows/);
      await lesson.click('#ex-preview-button');
      t2.equal(await lesson.locator('#ex-preview strong').innerText(), '5 or more');
      t2.same(await seriousViolations(lesson), [], 'axe: the form with a tried solution');
      await lesson.locator('#ex-try-result').scrollIntoViewIfNeeded();
      await lesson.screenshot({ path: path.join(SCREENSHOTS, 'console-lesson-1024.png') });

      await lesson.click('#ex-save');
      await lesson.waitForSelector('#lesson-exercises li[data-id="dear-items"]');
      await lesson.waitForSelector('#progress-grid th[data-exercise="dear-items"]');
      const stored = await server.get('/exercises/dear-items', admin);
      t2.equal(stored.body.exercise.position, 4, 'after the last');
      t2.equal(stored.body.exercise.solution, 'SELECT name FROM items WHERE price >= 5');

      await lesson.click('#lesson-exercises li[data-id="dear-items"] button.edit');
      await lesson.fill('#ex-title', 'Expensive items');
      await lesson.click('#ex-save');
      await waitForText(lesson, '#lesson-exercises li[data-id="dear-items"]', /Expensive items/);

      await lesson.fill('#ex-solution', 'SELECT nope FROM items');
      await lesson.click('#ex-save');
      await waitForText(lesson, '#exercise-form-error', /\[SQ\d{4}\][\s\S]*solution/);

      lesson.once('dialog', (dialog) => void dialog.accept());
      await lesson.click('#lesson-exercises li[data-id="dear-items"] button.delete');
      await lesson.waitForSelector('#lesson-exercises li[data-id="dear-items"]', { state: 'detached' });
      t2.equal((await server.get('/exercises/dear-items', admin)).status, 404);
    });

    await tt.test('no response to the student held a solution or a check', async (t2) => {
      const bodies = await Promise.all(received);
      t2.ok(
        bodies.some((body) => body.includes('"exercises"')),
        'the exercises were received',
      );
      t2.ok(
        bodies.some((body) => body.includes('"correct":true')),
        'checks were received',
      );
      for (const secret of SECRETS)
        t2.notOk(
          bodies.some((body) => body.includes(secret)),
          `no body holds ${secret}`,
        );
    });

    tt.same(student.problems, [], server.stderr());
    tt.same(teacher.problems, [], server.stderr());
  });
}
