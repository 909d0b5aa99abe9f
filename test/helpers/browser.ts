/**
 * The console in a real browser: Debian's `chromium` (apt-get install
 * chromium) driven by playwright-core, headless; no browser is ever
 * downloaded. A test file without chromium fails, saying so: it does not skip.
 * Shared by every console test file: launch, a server, a console tab that
 * records script errors and CSP violations, running SQL, and the axe-core
 * accessibility check.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startServer, type TestServer } from './server';
import { scratchDir } from './scratch-dir';

export const SCREENSHOTS = path.resolve(__dirname, '../screenshots');
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 760 };
/** Projector sizes a lesson is shown at. */
export const PROJECTOR_SMALL = { width: 1024, height: 768 };
export const PROJECTOR_WIDE = { width: 1366, height: 768 };

/** CHROMIUM_PATH, else `command -v chromium` (Debian's package puts it in /usr/bin). */
export function findChromium(): string | undefined {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return existsSync(configured) ? configured : undefined;
  try {
    const found = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : found;
  } catch {
    return undefined;
  }
}

/** `extraArgs`: more chromium switches (`--ignore-certificate-errors` for a test's self-signed HTTPS). */
export async function launch(
  tt: Test,
  executablePath: string,
  extraArgs: readonly string[] = [],
): Promise<BrowserContext> {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: DESKTOP,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
  tt.teardown(async () => {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  });
  return context;
}

export async function serverIn(tt: Test, args: string[] = []): Promise<TestServer> {
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), ...args], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
  });
  return server;
}

/** A new tab (its own sessionStorage) that records script errors and CSP violations. */
export async function openConsole(context: BrowserContext, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Refused requests (401, 400, 409) are part of the tests; Chromium logs each one.
    if (
      message.type() === 'error' &&
      !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
    )
      problems.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  return { page, problems };
}

/** Answers the console's token dialog with `token`. */
export async function enterToken(page: Page, token: string): Promise<void> {
  await page.waitForSelector('#token-dialog[open]');
  await page.fill('#token-input', token);
  await page.press('#token-input', 'Enter');
  await page.waitForSelector('#token-dialog:not([open])', { state: 'attached' });
}

export async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().innerText()).trim();
}

export async function waitForText(page: Page, selector: string, expected: string | RegExp): Promise<string> {
  const locator = page.locator(selector, { hasText: expected }).first();
  await locator.waitFor();
  return (await locator.innerText()).trim();
}

/**
 * A form control's value, once it is `expected` or after 5 s: the console
 * fills its lists (the databases of #db-select) after the page has loaded.
 */
export async function valueOnceSet(page: Page, selector: string, expected: string): Promise<string> {
  await page
    .waitForFunction(
      ([wanted, value]) => (document.querySelector(wanted) as HTMLInputElement | null)?.value === value,
      [selector, expected] as const,
      { timeout: 5000 },
    )
    .catch(() => undefined);
  return page.inputValue(selector);
}

/**
 * Puts `sql` in the console's editor (CodeMirror) through the handle the page
 * keeps on #sql-editor: typing would meet the editor's auto-closed brackets.
 */
export async function setEditorText(page: Page, sql: string): Promise<void> {
  await page.evaluate((text) => {
    (document.getElementById('sql-editor') as unknown as { sqlEditor: { setText(t: string): void } }).sqlEditor.setText(
      text,
    );
  }, sql);
}

/** The console editor's text. */
export function editorText(page: Page): Promise<string> {
  return page.evaluate(() =>
    (document.getElementById('sql-editor') as unknown as { sqlEditor: { getText(): string } }).sqlEditor.getText(),
  );
}

/** Runs the editor's SQL with Ctrl+Enter and waits for the results to change. */
export async function runSql(page: Page, sql: string): Promise<void> {
  // A run still finishing (its button disabled) would swallow the key press: wait it out first.
  await page.waitForFunction(() => !(document.getElementById('sql-run') as HTMLButtonElement).disabled);
  const before = await page.locator('#results').innerHTML();
  await setEditorText(page, sql);
  await page.focus('#sql-input');
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(
    (old) =>
      document.getElementById('results')!.innerHTML !== old &&
      !(document.getElementById('sql-run') as HTMLButtonElement).disabled,
    before,
  );
}

/**
 * The labels of the open completion list, once it offers each of `expected` or after 5 s:
 * CodeMirror may show the options of one source a moment before another's (a fresh clone under
 * load once read the list before the new table's columns were in it).
 */
export async function completionLabels(page: Page, expected: readonly string[]): Promise<string[]> {
  const labels = '.cm-tooltip-autocomplete li .cm-completionLabel';
  await page.locator('.cm-tooltip-autocomplete').waitFor();
  await page
    .waitForFunction(
      ([selector, wanted]) => {
        const shown = new Set(Array.from(document.querySelectorAll(selector), (label) => label.textContent));
        return wanted.every((label) => shown.has(label));
      },
      [labels, expected] as const,
      { timeout: 5000 },
    )
    .catch(() => undefined);
  return page.locator(labels).allInnerTexts();
}

/** The page's own horizontal overflow, in pixels (0 when it does not scroll sideways). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - document.documentElement.clientWidth,
  );
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The
 * script is evaluated through the debugging protocol, so the console's
 * Content-Security-Policy (script-src 'self') need not be loosened for it.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
          }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => String(n.target.join(' '))),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Opens the Pilots view and fills its form with a record that is valid but
 * for its commit (`NOT-HEX`, not hexadecimal); `decision` is left out when
 * undefined. The caller submits it.
 */
export async function fillPilotForm(page: Page, fields: { classes: string; decision?: string }): Promise<void> {
  await page.click('nav [data-nav="pilots"]');
  await page.waitForSelector('#p-decision option[value="conservar"]', { state: 'attached' });
  await page.fill('#p-date', '2026-03-02');
  await page.fill('#p-role', 'teacher');
  await page.fill('#p-level', '7');
  await page.fill('#p-subject', 'math');
  await page.fill('#p-objective', 'fractions');
  await page.fill('#p-classes', fields.classes);
  await page.fill('#p-commit', 'NOT-HEX');
  await page.fill('#p-planned', '45');
  await page.fill('#p-actual', '50');
  for (const [id, value] of [
    ['#p-ev-ano', '2'],
    ['#p-ev-ed', '6'],
    ['#p-ev-lo', '12'],
    ['#p-ev-pr', '4'],
  ] as const)
    await page.fill(id, value);
  if (fields.decision !== undefined) await page.selectOption('#p-decision', fields.decision);
}
