/**
 * The console's SQL editor (CodeMirror 6, bundled into dist/console/editor.js)
 * in Debian's Chromium against the real server: SQLite highlighting, matched
 * brackets, completion of a table's columns after `SELECT `, the failing
 * statement marked (not by colour alone), the history of a database surviving
 * a reload, a link that reopens a database and its SQL without running it, no
 * CSP violation (CodeMirror's <style> elements carry the page's nonce), no
 * serious or critical axe violation, keyboard use (Escape then Tab leaves the
 * editor), and screenshots at the two projector sizes.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  PROJECTOR_SMALL,
  PROJECTOR_WIDE,
  SCREENSHOTS,
  axeViolations,
  completionLabels,
  editorText,
  findChromium,
  launch,
  openConsole,
  runSql,
  serverIn,
  setEditorText,
  text,
  valueOnceSet,
  waitForText,
} from './helpers/browser';

t.setTimeout(120_000);

t.test('the page carries a fresh style nonce; the assets and the rest of the policy stay strict', async (tt) => {
  const server = await serverIn(tt);
  const nonces: string[] = [];
  for (let i = 0; i < 2; i++) {
    const page = await server.get('/');
    const policy = String(page.headers.get('content-security-policy'));
    const match = /style-src 'self' 'nonce-([A-Za-z0-9+/=]+)';/.exec(policy);
    tt.ok(match, `style-src names a nonce: ${policy}`);
    const nonce = match?.[1] ?? '';
    tt.match(page.text, `<meta name="csp-nonce" content="${nonce}">`, 'the page can read the nonce');
    tt.match(
      policy,
      /^default-src 'none'; script-src 'self'; style-src 'self' 'nonce-[^']+'; img-src 'self' data:; connect-src 'self';/,
      'nothing else is loosened',
    );
    nonces.push(nonce);
  }
  tt.not(nonces[0], nonces[1], 'a new nonce per response');
  const bundle = await server.get('/console/editor.js');
  tt.equal(bundle.status, 200, 'the editor bundle is served');
  tt.match(bundle.headers.get('content-type'), /^text\/javascript/);
  tt.match(bundle.headers.get('content-security-policy'), /style-src 'self';/, 'assets carry no nonce');
  tt.notMatch(bundle.text, /\bfrom\s*["'](?!\.)[@a-z]/, 'no bare module name is left for the browser to resolve');
});

const chromiumPath = findChromium();

if (chromiumPath === undefined) {
  t.fail(
    "chromium is missing: the browser tests need Debian's chromium (apt-get update && apt-get install -y chromium), or CHROMIUM_PATH naming a Chromium binary",
  );
} else {
  const executablePath = chromiumPath;

  t.test('in the browser: the SQL editor, its history and links', async (tt) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const server = await serverIn(tt);
    const context = await launch(tt, executablePath);
    const { page, problems } = await openConsole(context, `${server.url}/`);
    const violations: string[] = [];
    await page.exposeFunction('reportCsp', (what: string) => violations.push(what));
    const listen = (): void =>
      document.addEventListener('securitypolicyviolation', (event) =>
        (window as unknown as { reportCsp(s: string): void }).reportCsp(
          `${event.violatedDirective} ${event.blockedURI}`,
        ),
      );
    await page.addInitScript(listen);
    await page.evaluate(listen);

    await page.fill('#db-name', 'school');
    await page.press('#db-name', 'Enter');
    await waitForText(page, '#db-list button[aria-pressed="true"]', 'school.db');
    await page.click('nav [data-nav="sql"]');
    await page.waitForSelector('#view-sql:not([hidden])');

    tt.test('the editor is CodeMirror, named, and its styles applied', async (t2) => {
      t2.equal(await page.locator('#sql-editor .cm-editor').count(), 1);
      t2.equal(await page.getAttribute('#sql-input', 'contenteditable'), 'true', '#sql-input is the editable element');
      t2.equal(
        await page.getAttribute('#sql-input', 'aria-labelledby'),
        'editor-h',
        'its accessible name is the heading',
      );
      const styled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('style')).some(
          (style) => style.nonce !== '' && /\.cm-/.test(style.textContent ?? ''),
        ),
      );
      t2.ok(styled, "CodeMirror's styles are in a <style> that carries the nonce");
      // Its base theme sets .cm-editor to a flex column: only there when the <style> applied.
      t2.equal(
        await page.evaluate(() => getComputedStyle(document.querySelector('.cm-editor')!).display),
        'flex',
        'and the browser applied them',
      );
    });

    tt.test('a run creates tables; the highlighting has token classes', async (t2) => {
      await runSql(
        page,
        "CREATE TABLE pupils (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INT);\nINSERT INTO pupils (name, age) VALUES ('Ana', 13), ('Bruno', 14);",
      );
      t2.equal(await page.locator('#results article.result').count(), 2);
      await setEditorText(page, "SELECT name, 42 FROM pupils WHERE name = 'Ana'");
      const tokens = await page.evaluate(() =>
        Array.from(document.querySelectorAll('#sql-input .cm-line span')).map((span) => ({
          text: span.textContent,
          cls: span.className,
          color: getComputedStyle(span).color,
        })),
      );
      t2.ok(
        tokens.length >= 3 && tokens.every((token) => token.cls !== ''),
        'highlighted tokens are spans with a token class',
      );
      const keyword = tokens.find((token) => token.text === 'SELECT');
      const string = tokens.find((token) => token.text === "'Ana'");
      const number = tokens.find((token) => token.text === '42');
      t2.ok(keyword && string && number, `keywords, strings and numbers are tokens: ${JSON.stringify(tokens)}`);
      t2.not(keyword?.color, string?.color, 'a keyword and a string look different');
      t2.not(keyword?.color, 'rgb(17, 17, 17)', 'a keyword is not plain text');
    });

    tt.test('completion offers the columns of the table the statement reads', async (t2) => {
      await setEditorText(page, ' FROM pupils');
      await page.focus('#sql-input');
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('SELECT ');
      await page.keyboard.press('Control+Space');
      const labels = await completionLabels(page, ['id', 'name', 'age']);
      for (const column of ['id', 'name', 'age']) t2.ok(labels.includes(column), `${column} in ${labels.join(', ')}`);
      await page.keyboard.type('ag');
      // 'age' is already selected in the list opened for "SELECT " (it sorts first): wait for the list
      // filtered by "ag" (no 'id' in it), then past @codemirror/autocomplete's interactionDelay (75 ms
      // after a list opens, Enter is not taken but inserts a newline) — the test raced both before.
      await page.waitForFunction(() => {
        const items = Array.from(document.querySelectorAll('.cm-tooltip-autocomplete li'), (li) => li.textContent);
        return items.length > 0 && !items.includes('id');
      });
      await page.locator('.cm-tooltip-autocomplete li[aria-selected="true"]', { hasText: 'age' }).waitFor();
      await page.waitForTimeout(150);
      await page.keyboard.press('Enter');
      t2.equal(await editorText(page), 'SELECT age FROM pupils', 'Enter takes the completion');
      await setEditorText(page, 'SELECT * FROM ');
      await page.focus('#sql-input');
      await page.keyboard.press('End');
      await page.keyboard.press('Control+Space');
      const tables = await completionLabels(page, ['pupils']);
      t2.ok(tables.includes('pupils'), `table names from /tables: ${tables.slice(0, 10).join(', ')}…`);
      await page.keyboard.press('Escape');
    });

    tt.test('a table made by a run is offered at once', async (t2) => {
      await runSql(page, 'CREATE TABLE teachers (id INTEGER PRIMARY KEY, subject TEXT)');
      await setEditorText(page, ' FROM teachers');
      await page.focus('#sql-input');
      await page.keyboard.press('Control+Home');
      await page.keyboard.type('SELECT sub');
      await page.keyboard.press('Control+Space');
      const columns = await completionLabels(page, ['subject']);
      t2.ok(columns.includes('subject'), `the new table's column: ${columns.slice(0, 10).join(', ')}…`);
      await page.keyboard.press('Escape');
    });

    tt.test('brackets are matched', async (t2) => {
      await setEditorText(page, 'SELECT count(id) FROM pupils');
      await page.focus('#sql-input');
      await page.keyboard.press('Control+Home');
      for (let i = 0; i < 'SELECT count('.length; i++) await page.keyboard.press('ArrowRight');
      const matched = await page.locator('#sql-input .cm-matchingBracket').allInnerTexts();
      t2.same(matched.sort(), ['(', ')'], 'the pair is highlighted');
    });

    tt.test('a failing statement is marked, with a word as well as colour', async (t2) => {
      const failing = "INSERT INTO pupils (id, name) VALUES (1, 'Dup')";
      await runSql(page, `SELECT 1;\n${failing};`);
      await page.locator('#sql-error').waitFor();
      t2.equal(await text(page, '#sql-failed-mark'), failing, 'the failing statement is decorated');
      t2.equal(await text(page, '#sql-input .cm-failed-flag'), 'failed ▸', 'a visible word marks it');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-editor-error.png') });
      await page.focus('#sql-input');
      await page.keyboard.press('End');
      await page.keyboard.type(' ');
      t2.equal(await page.locator('#sql-failed-mark').count(), 0, 'an edit clears it');
    });

    tt.test('history: newest first, survives a reload, puts a run back', async (t2) => {
      await runSql(page, 'SELECT name FROM pupils ORDER BY name');
      await page.click('#sql-history-box summary');
      const entries = await page.locator('#sql-history .history-item').allInnerTexts();
      t2.match(entries[0], /SELECT name FROM pupils ORDER BY name$/, 'the newest run first');
      t2.ok(
        entries.some((entry) => entry.endsWith('CREATE TABLE teachers (id INTEGER PRIMARY KEY, subject TEXT)')),
        'earlier runs below',
      );
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.click('#sql-history-box summary');
      const after = await page.locator('#sql-history .history-item').allInnerTexts();
      t2.same(after, entries, 'the same list after a reload');
      await setEditorText(page, '');
      const second = page.locator('#sql-history .history-item').nth(1);
      t2.equal(
        await second.getAttribute('title'),
        "SELECT 1;\nINSERT INTO pupils (id, name) VALUES (1, 'Dup');",
        'a run keeps its line breaks',
      );
      await second.click();
      t2.equal(
        await editorText(page),
        "SELECT 1;\nINSERT INTO pupils (id, name) VALUES (1, 'Dup');",
        'a click puts it back in the editor',
      );
      t2.ok(await page.evaluate(() => document.activeElement?.id === 'sql-input'), 'and focuses the editor');
    });

    tt.test('history is bounded per database and a repeated run moves to the top', async (t2) => {
      // A string, so that the test's CommonJS compilation does not rewrite the browser's import().
      const lists = (await page.evaluate(`import('/console/editor-history.js').then((history) => {
        for (let i = 0; i < history.HISTORY_LIMIT + 10; i++) history.addToHistory('bounded.db', 'SELECT ' + i);
        const full = history.readHistory('bounded.db');
        const again = history.addToHistory('bounded.db', 'SELECT 30');
        return { limit: history.HISTORY_LIMIT, full, again, other: history.readHistory('other.db') };
      })`)) as { limit: number; full: string[]; again: string[]; other: string[] };
      t2.equal(lists.limit, 50);
      t2.equal(lists.full.length, 50, 'at most 50 a database');
      t2.equal(lists.full[0], 'SELECT 59', 'newest first');
      t2.equal(lists.full[49], 'SELECT 10', 'the oldest fall off');
      t2.equal(lists.again.length, 50);
      t2.same(lists.again.slice(0, 2), ['SELECT 30', 'SELECT 59'], 'a repeated run moves to the top, once');
      t2.same(lists.other, [], 'each database has its own');
    });

    tt.test('a link reopens the database and the SQL, and never runs it', async (t2) => {
      const sql = "INSERT INTO pupils (name) VALUES ('From a link')";
      await setEditorText(page, sql);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      await page.click('#sql-copy-link');
      const link = await page.locator('#sql-link-status a').getAttribute('href');
      t2.ok(link?.startsWith(`${server.url}/?db=school.db&sql=`), `the link: ${link}`);
      t2.equal(await page.evaluate(() => navigator.clipboard.readText()), link, 'it is on the clipboard');
      const other = await openConsole(context, String(link));
      t2.equal(await valueOnceSet(other.page, '#db-select', 'school.db'), 'school.db', 'the database is selected');
      t2.ok(await other.page.isVisible('#view-sql'), 'the SQL view is shown');
      t2.equal(await editorText(other.page), sql, 'the editor holds the SQL');
      t2.equal(new URL(other.page.url()).search, '', 'the address bar forgets the parameters');
      t2.equal(await text(other.page, '#results'), 'Nothing run yet.', 'nothing ran');
      const count = await server.exec('school', "SELECT count(*) FROM pupils WHERE name = 'From a link'");
      t2.equal(count.body?.results?.[0]?.rows?.[0]?.[0], 0, 'no row was written');
      t2.same(other.problems, []);
      await other.page.close();
    });

    tt.test('keyboard: Ctrl+Enter runs, Escape then Tab leaves the editor', async (t2) => {
      await setEditorText(page, 'SELECT 7 AS seven');
      await page.focus('#sql-input');
      const before = await page.locator('#results').innerHTML();
      await page.keyboard.press('Control+Enter');
      // The run ends (Run enabled again, so Tab can land on it) after the results show: wait for both.
      await page.waitForFunction(
        (old) =>
          document.getElementById('results')!.innerHTML !== old &&
          !(document.getElementById('sql-run') as HTMLButtonElement).disabled,
        before,
      );
      t2.match(await text(page, '#results'), /seven/);
      await page.focus('#sql-input');
      await page.keyboard.press('Tab');
      t2.equal(await page.evaluate(() => document.activeElement?.id), 'sql-input', 'Tab alone indents');
      await page.keyboard.press('Escape');
      await page.keyboard.press('Tab');
      t2.equal(await page.evaluate(() => document.activeElement?.id), 'sql-run', 'Escape then Tab moves on to Run');
    });

    tt.test('accessibility and projector screenshots', async (t2) => {
      await setEditorText(page, 'SELECT name, age\nFROM pupils\nWHERE age > 12\nORDER BY name;');
      await page.evaluate(() => {
        (document.getElementById('sql-history-box') as HTMLDetailsElement).open = true;
      });
      for (const [size, file] of [
        [PROJECTOR_SMALL, 'console-editor-1024.png'],
        [PROJECTOR_WIDE, 'console-editor-1366.png'],
      ] as const) {
        await page.setViewportSize(size);
        await page.screenshot({ path: path.join(SCREENSHOTS, file) });
      }
      t2.same(await axeViolations(page), [], 'no serious or critical axe violations on the SQL view');
    });

    tt.test('no script error, no CSP violation', async (t2) => {
      t2.same(violations, [], 'no securitypolicyviolation event');
      t2.same(problems, []);
    });
  });
}
