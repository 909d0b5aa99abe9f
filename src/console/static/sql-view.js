// @ts-check
// The SQL view: a multi-statement editor (Ctrl+Enter runs), results as tables
// and messages, engine errors with their code and the failing statement marked
// in the editor, and the transaction session controls with the idle countdown.

import { api, ApiError, codeLabel, messageText, query, serverNowUnix } from './api.js';
import { errorFieldsNode } from './error-fields.js';
import { $, clear, field, h } from './dom.js';
import { resultTable } from './result-table.js';
import { statementSpans } from './statement-spans.js';
import { loadDatabases, notify, notifyError, onChange, setDb, setEditorOpener, setSession, state } from './state.js';
import { createSqlEditor } from './editor.js';
import { addToHistory, readHistory } from './editor-history.js';
import { forgetQueryLink, queryLink, readQueryLink } from './editor-link.js';
import { loadTables } from './data-view.js';
import { confirmMassWrites } from './mass-write-guard.js';

/** Errors after which the server has closed the session (rolled back). */
const SESSION_GONE = new Set([5002, 5003, 5007, 6008, 9008]);
const SAVED_SQL = 'sqlscribe.sql';

let running = false;
/** @type {ReturnType<typeof setInterval> | undefined} */
let timer;

/* ---------- editor ---------- */

// The editor is CodeMirror, bundled into dist/console/editor.js (see
// src/console/editor/editor.mjs); this view only uses the handle it returns.
/** @typedef {ReturnType<typeof import('./editor.js').createSqlEditor>} SqlEditor */
/** @typedef {import('./statement-spans.js').ScriptSplit['statements'][number]} Statement */
/** @type {SqlEditor} */
let sqlEditor;

/** @returns {SqlEditor} */
function editor() {
  return sqlEditor;
}

/**
 * Marks [start, end) of the editor's text as the failing statement; no arguments clears it.
 * @param {number} [start]
 * @param {number} [end]
 */
function markRange(start, end) {
  sqlEditor.markRange(start, end);
}

/**
 * Puts `sql` in the editor and shows the SQL view (the Data view's "Query in SQL", through state.js).
 * @param {string} sql
 */
function showInEditor(sql) {
  sqlEditor.setText(sql);
  location.hash = '#sql';
  sqlEditor.focus();
}

/** Statements after which the tables, and so the completions, may differ. */
const SCHEMA_CHANGE = /\b(CREATE|DROP|ALTER)\b/i;

let schemaLoad = 0;

/** Table → column names of the current database, for completion; refreshed on a new database or a schema change. */
async function refreshCompletions() {
  const load = ++schemaLoad;
  if (state.db === '') {
    sqlEditor.setSchema({});
    return;
  }
  try {
    const { tables } = await api('GET', `/tables${query({ db: state.db })}`);
    if (load !== schemaLoad) return;
    sqlEditor.setSchema(
      Object.fromEntries(
        tables.map((/** @type {any} */ table) => [
          table.name,
          table.columns.map((/** @type {any} */ column) => column.name),
        ]),
      ),
    );
  } catch {
    // Completion is a help: without the schema the editor still highlights and runs.
  }
}

/* ---------- history and links ---------- */

/** @param {string[]} [list] */
function renderHistory(list = readHistory(state.db)) {
  const items = list.map((sql, i) =>
    h(
      'li',
      null,
      h(
        'button',
        {
          type: 'button',
          class: 'history-item',
          title: sql,
          onclick: () => {
            sqlEditor.setText(sql);
            sqlEditor.focus();
          },
        },
        h('span', { class: 'visually-hidden' }, `Put run ${i + 1} back in the editor: `),
        sql,
      ),
    ),
  );
  clear(
    $('sql-history'),
    items.length > 0 ? items : h('li', { class: 'muted' }, 'No runs on this database yet in this browser.'),
  );
}

async function copyLink() {
  const link = queryLink(state.session?.db ?? state.db, sqlEditor.getText());
  const status = $('sql-link-status');
  try {
    await navigator.clipboard.writeText(link);
    clear(
      status,
      'Link copied: it opens this database with these statements (it does not run them). ',
      h('a', { href: link }, 'Link'),
    );
  } catch {
    // No clipboard permission (http on another host): the link is still there to copy by hand.
    clear(status, 'Copy this link: ', h('a', { href: link }, link));
  }
}

/** A link's database and SQL, put in place before the first load; never run. */
function openQueryLink() {
  const link = readQueryLink();
  if (link === null) return false;
  if (link.db !== '') setDb(link.db);
  sqlEditor.setText(link.sql);
  forgetQueryLink();
  return true;
}

/* ---------- results ---------- */

/**
 * @param {Statement | undefined} statement
 * @param {number} index
 */
function statementLabel(statement, index) {
  const text = statement?.text ?? '';
  const short = text.length > 80 ? `${text.slice(0, 77)}…` : text;
  return h('h3', null, `${index + 1}. `, h('code', null, short.replace(/\s+/g, ' ')));
}

/**
 * @param {any} result one result of POST /exec
 * @param {Statement | undefined} statement
 * @param {number} index
 */
function resultNode(result, statement, index) {
  const parts = [statementLabel(statement, index)];
  if (typeof result.message === 'string') {
    const affected =
      typeof result.changes === 'number' && /^(INSERT|UPDATE|DELETE)/.test(result.message)
        ? ` · ${result.changes} row${result.changes === 1 ? '' : 's'} affected`
        : '';
    parts.push(h('p', { class: 'ok-message' }, result.message, affected));
  }
  if (result.columns.length > 0) {
    parts.push(
      resultTable({
        columns: result.columns,
        rows: result.rows,
        types: result.types ?? [],
        label: `Result of statement ${index + 1}`,
        name: `result-${index + 1}`,
      }),
    );
    parts.push(
      h(
        'p',
        { class: 'muted' },
        `${result.rows.length} row${result.rows.length === 1 ? '' : 's'}`,
        result.truncated ? " (cut at the server's -max-result-rows: the result is truncated)" : '',
      ),
    );
  }
  return h('article', { class: 'result' }, parts);
}

/** Room kept above the editor and below the result's start, so that neither touches the window's edge. */
const REVEAL_MARGIN = 12;

/** The start of what a run shows: the first row of its first table, else the first result's (or the error's) first lines. */
function resultStartBottom() {
  const row = document.querySelector('#results tbody tr');
  if (row) return row.getBoundingClientRect().bottom;
  const first = $('results').firstElementChild;
  if (!first) return $('results').getBoundingClientRect().bottom;
  const box = first.getBoundingClientRect();
  return Math.min(box.bottom, box.top + 160);
}

/**
 * Brings the start of the results (or the error) into view together with the
 * statements that made them: at 1366×768 the editor used to scroll away, so
 * the class saw a result without its query. The page moves as
 * little as it can; only when both cannot fit (a short window, 200% zoom)
 * does the results panel go to the window's top, as before.
 */
function revealResults() {
  const from = $('sql-editor').getBoundingClientRect().top - REVEAL_MARGIN;
  const to = resultStartBottom() + REVEAL_MARGIN;
  if (to - from > window.innerHeight) {
    /** @type {HTMLElement} */ ($('results').closest('section')).scrollIntoView({ block: 'start' });
    return;
  }
  // Any scroll in [to - innerHeight, from] shows both; the one nearest 0 moves least.
  const by = Math.min(Math.max(0, to - window.innerHeight), from);
  window.scrollBy(0, by);
}

/**
 * What the results show: the session's own view of the data, or committed data.
 * @param {boolean} inSession
 */
function resultsSource(inSession) {
  const label = $('results-source');
  label.dataset.source = inSession ? 'session' : 'committed';
  label.textContent = inSession ? 'Inside your open transaction (not yet committed)' : 'Committed data';
}

/**
 * @param {any[]} results
 * @param {Statement[]} statements
 * @param {boolean} inSession
 */
function showResults(results, statements, inSession) {
  resultsSource(inSession);
  clear(
    $('results'),
    results.map((result, i) => resultNode(result, statements[i], i)),
  );
  revealResults();
}

/**
 * @param {ApiError} error
 * @param {Statement[]} statements
 * @param {boolean} inSession
 */
function errorNode(error, statements, inSession) {
  const index = typeof error.body.statement === 'number' ? error.body.statement : undefined;
  const failed = index === undefined ? undefined : statements[index];
  const outcome = SESSION_GONE.has(error.code)
    ? 'The session was closed and rolled back.'
    : inSession
      ? 'The statements of this run were undone; the session stays open.'
      : 'Nothing of this run was committed (all or nothing).';
  return h(
    'div',
    { class: 'error-box', role: 'alert', id: 'sql-error', dataset: { code: error.code ?? '', statement: index ?? '' } },
    h(
      'p',
      null,
      h('span', { class: 'code-badge' }, codeLabel(error.code) || `HTTP ${error.status}`),
      messageText(error),
    ),
    errorFieldsNode(error.body),
    h(
      'p',
      null,
      index !== undefined ? `Failed at statement ${index + 1} of ${statements.length}. ` : null,
      error.body.sqliteCode ? `SQLite: ${error.body.sqliteCode}. ` : null,
      outcome,
    ),
    failed && statements.length > 0
      ? h(
          'ol',
          { class: 'statements', 'aria-label': 'Statements of this run' },
          statements.map((statement, i) =>
            h(
              'li',
              { class: i === index ? 'failed' : undefined, 'aria-current': i === index ? 'true' : undefined },
              statement.text,
            ),
          ),
        )
      : null,
  );
}

async function run() {
  if (running) return;
  const sql = editor().getText();
  const { statements } = statementSpans(sql);
  const results = $('results');
  markRange();
  if (statements.length === 0) {
    clear(results, h('p', { class: 'muted' }, 'Write a statement first.'));
    return;
  }
  running = true;
  field('sql-run').disabled = true;
  const session = state.session;
  try {
    if (!(await confirmMassWrites(sql, { db: state.db, session }, statements.length))) {
      clear(results, h('p', { class: 'muted', id: 'sql-cancelled' }, 'Cancelled: nothing was sent.'));
      return;
    }
    /** @type {{ sql: string, db?: string }} */
    const body = { sql };
    if (!session && state.db !== '') body.db = state.db;
    renderHistory(addToHistory(session?.db ?? state.db, sql));
    const answer = await api('POST', '/exec', { body, session: session?.id });
    if (session && answer.session === session.id) setSession({ ...session, expires_unix: answer.expires_unix });
    showResults(answer.results, statements, Boolean(session));
    if (!session) await loadDatabases();
    await loadTables();
    if (SCHEMA_CHANGE.test(sql)) await refreshCompletions();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const index = error.body.statement;
    if (typeof index === 'number' && statements[index]) markRange(statements[index].start, statements[index].end);
    if (session && SESSION_GONE.has(error.code)) setSession(null);
    clear(results, errorNode(error, statements, Boolean(session)));
    revealResults();
  } finally {
    running = false;
    field('sql-run').disabled = false;
  }
}

/* ---------- transaction session ---------- */

/**
 * @param {number} seconds
 * @returns {string}
 */
function formatSeconds(seconds) {
  // Rounded, not raised: the server's clock is known to half a second (its Date header) and
  // expires_unix to the second below, so a fresh session can seem up to 300.5 s from its end;
  // raised, a five-minute idle time would show as 5:01.
  const whole = Math.max(0, Math.round(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

function renderSession() {
  const session = state.session;
  const panel = /** @type {HTMLElement} */ ($('tx-state').closest('.panel'));
  const badge = $('session-badge');
  clearInterval(timer);
  field('tx-begin').disabled = Boolean(session);
  field('tx-commit').disabled = !session;
  field('tx-rollback').disabled = !session;
  // Only the buttons that can act are shown, so the panel stays one line on a 1024 px projector.
  $('tx-begin').hidden = Boolean(session);
  $('tx-commit').hidden = !session;
  $('tx-rollback').hidden = !session;
  panel.classList.toggle('is-active', Boolean(session));
  $('tx-state').dataset.state = session ? 'active' : 'none';
  $('sql-target').textContent = session
    ? `Runs in the open session on ${session.db}: nothing is committed until Commit.`
    : state.db
      ? `Runs on ${state.db}, committed at once.`
      : 'No database chosen: only database-level statements (CREATE DATABASE …) run.';
  if (!session) {
    $('tx-state').textContent = 'No session: every run commits by itself (all or nothing).';
    $('tx-timer').hidden = true;
    badge.hidden = true;
    return;
  }
  // The id is drawn shortened (CSS) to keep the panel one line; its full text stays for copying and screen readers.
  clear(
    $('tx-state'),
    'Session ',
    h('span', { class: 'tx-id', title: session.id }, session.id),
    ` active on ${session.db}`,
  );
  const tick = () => {
    const left = session.expires_unix - serverNowUnix();
    if (left <= 0) {
      setSession(null);
      notify('The session expired after its idle time: the server rolled it back.', { error: true });
      return;
    }
    $('tx-timer').hidden = false;
    $('tx-timer').textContent = `Rolls back if idle for ${formatSeconds(left)}`;
    $('tx-timer').classList.toggle('is-low', left <= 30);
    badge.hidden = false;
    badge.textContent = `Transaction open · ${formatSeconds(left)}`;
  };
  tick();
  timer = setInterval(tick, 1000);
}

async function begin() {
  try {
    const opened = await api('POST', '/tx/begin', { body: state.db === '' ? {} : { db: state.db } });
    setSession({ id: opened.session, db: opened.db, expires_unix: opened.expires_unix });
    notify(`Session opened on ${opened.db}.`);
    editor().focus();
  } catch (error) {
    notifyError(error);
  }
}

/** @param {boolean} commit */
async function end(commit) {
  const session = state.session;
  if (!session) return;
  state.ending = session.id;
  try {
    const ended = await api('POST', `/tx/${commit ? 'commit' : 'rollback'}${query({ session: session.id })}`);
    state.ending = null;
    setSession(null);
    notify(`${ended.message}: the session on ${ended.db} is closed.`);
    await loadTables();
  } catch (error) {
    state.ending = null;
    if (error instanceof ApiError && SESSION_GONE.has(error.code)) setSession(null);
    notifyError(error);
  }
  $('tx-begin').focus();
}

export function initSqlView() {
  setEditorOpener(showInEditor);
  const parent = $('sql-editor');
  sqlEditor = createSqlEditor({
    parent,
    doc: sessionStorage.getItem(SAVED_SQL) ?? '',
    nonce: document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content') ?? '',
    contentAttributes: {
      id: 'sql-input',
      'aria-labelledby': 'editor-h',
      'aria-describedby': 'sql-hint sql-target',
      spellcheck: 'false',
      autocapitalize: 'off',
      autocorrect: 'off',
    },
    onRun: () => run(),
    onChange: (text) => sessionStorage.setItem(SAVED_SQL, text),
  });
  // The browser tests set the text through this handle (typing would meet auto-closed brackets).
  /** @type {HTMLElement & { sqlEditor?: unknown }} */ (parent).sqlEditor = sqlEditor;
  openQueryLink();
  $('sql-copy-link').addEventListener('click', copyLink);
  renderHistory();
  refreshCompletions();
  $('sql-run').addEventListener('click', run);
  $('tx-begin').addEventListener('click', begin);
  $('tx-commit').addEventListener('click', () => end(true));
  $('tx-rollback').addEventListener('click', () => end(false));
  onChange((what) => {
    if (what === 'session' || what === 'db') renderSession();
    if (what === 'db') {
      renderHistory();
      refreshCompletions();
    }
  });
  renderSession();
}
