// @ts-check
// The Class view, a teacher's: every student (or database) of the class by
// name, one compact line each (thirty fit in two screens at 1366×768), with
// the last activity and the newest error (GET /class, admin only); a click
// on a name opens that student's history (history-view.js); a
// button that returns a student's copy to its template
// (POST /dbs/{db}/reset), and the requests the server refused (who, from
// where, which database, which code). The tab shows only when GET /class answers, that
// is for an admin token (or a server without tokens).

import { api, codeLabel, storedToken } from './api.js';
import { $, clear, h } from './dom.js';
import { notify, notifyError } from './state.js';
import { byName, studentsByDatabase } from './class-students.js';
import { openHistory } from './history-view.js';

/**
 * A database of GET /class, with the names of the students whose tokens are bound to it.
 * @typedef {any} ClassEntry
 */

/**
 * @param {string} db
 * @returns {string}
 */
function bareName(db) {
  return db.replace(/\.db$/, '');
}

/**
 * @param {string | null} ts
 * @returns {string}
 */
function timeText(ts) {
  if (ts === null) return 'no activity seen';
  const date = new Date(ts);
  if (Number.isNaN(date.getTime())) return ts;
  // Today's date goes without saying, and leaves the line short.
  return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
}

/**
 * Who caused an error or refusal; a revoked token's name may be this term's student's too, so it says so.
 * @param {{ tokenName: string | null, former?: boolean }} item
 * @param {string} nobody
 */
function whoText(item, nobody) {
  const name = item.tokenName ?? nobody;
  return item.former === true ? `${name} (former)` : name;
}

/** @param {any} error a recent error of GET /class */
function errorItem(error) {
  return h(
    'li',
    { class: 'class-error', dataset: { code: error.code } },
    h('span', { class: 'code-badge' }, codeLabel(error.code)),
    h('span', { class: 'who' }, whoText(error, 'anonymous')),
    ' ',
    h('time', { datetime: error.ts }, new Date(error.ts).toLocaleTimeString()),
    error.statement ? h('code', { class: 'statement' }, error.statement) : null,
    h('span', { class: 'class-error-text' }, error.error.replace(/^\[SQ\d{4}\]\s*/, '')),
  );
}

/** @param {any} refusal */
function refusalRow(refusal) {
  return h(
    'tr',
    { class: 'class-refusal', dataset: { code: refusal.code } },
    h('td', null, h('time', { datetime: refusal.ts }, new Date(refusal.ts).toLocaleTimeString())),
    h('th', { scope: 'row', class: 'who' }, whoText(refusal, 'no token')),
    h('td', null, refusal.db === null ? h('span', { class: 'muted' }, '—') : bareName(refusal.db)),
    h(
      'td',
      null,
      h('span', { class: 'code-badge' }, codeLabel(refusal.code)),
      ' ',
      refusal.error.replace(/^\[SQ\d{4}\]\s*/, ''),
    ),
    h('td', null, h('code', null, refusal.request)),
    h('td', null, refusal.client),
  );
}

/** @param {any[]} refused */
function showRefused(refused) {
  clear(
    $('class-refused'),
    refused.length === 0
      ? h('p', { class: 'muted' }, 'No request refused.')
      : h(
          'div',
          { class: 'table-wrap', role: 'region', 'aria-label': 'Refused requests', tabindex: '0' },
          h(
            'table',
            { class: 'class-table refused-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Time', 'Token', 'Database', 'Refused', 'Request', 'Client'].map((name) =>
                  h('th', { scope: 'col' }, name),
                ),
              ),
            ),
            h('tbody', null, refused.map(refusalRow)),
          ),
        ),
  );
}

/**
 * @param {string} db
 * @param {string} template
 * @param {HTMLButtonElement} button
 */
async function reset(db, template, button) {
  if (!window.confirm(`Reset ${bareName(db)} to ${bareName(template)}? Its changes are lost.`)) return;
  button.disabled = true;
  try {
    await api('POST', `/dbs/${encodeURIComponent(bareName(db))}/reset`, { body: {} });
    notify(`${bareName(db)} is a fresh copy of ${bareName(template)} again.`);
    await loadClass();
  } catch (error) {
    button.disabled = false;
    notifyError(error);
  }
}

/**
 * The newest error on one line, and the few before it folded under it.
 * @param {ClassEntry} entry
 */
function errorsCell(entry) {
  const errors = entry.recentErrors;
  if (errors.length === 0) return h('span', { class: 'muted' }, 'none');
  return [
    h('ul', { class: 'class-errors', 'aria-label': `Newest error of ${bareName(entry.db)}` }, errorItem(errors[0])),
    // The earlier ones fold away to keep the line; the student's history (a click on the name) has them all.
    errors.length > 1
      ? h(
          'details',
          { class: 'class-more' },
          h('summary', null, `+${errors.length - 1} earlier`),
          h(
            'ul',
            { class: 'class-errors-earlier', 'aria-label': `Earlier errors of ${bareName(entry.db)}` },
            errors.slice(1, 5).map(errorItem),
          ),
        )
      : null,
  ];
}

/** @param {ClassEntry} entry */
function resetCell(entry) {
  if (!entry.template) return h('span', { class: 'muted' }, '—');
  return h(
    'button',
    {
      type: 'button',
      class: 'reset',
      dataset: { db: entry.db },
      onclick: (/** @type {MouseEvent} */ event) =>
        reset(entry.db, entry.template, /** @type {HTMLButtonElement} */ (event.currentTarget)),
    },
    'Reset ',
    h('span', { class: 'visually-hidden' }, `${bareName(entry.db)} `),
    'to template',
  );
}

/**
 * A student's name (its token's, else the database's), which opens its history.
 * @param {ClassEntry} entry
 */
function nameCell(entry) {
  const name = entry.students[0] ?? bareName(entry.db);
  const token = entry.students.length === 1 ? name : '';
  return h(
    'th',
    { scope: 'row' },
    h(
      'button',
      {
        type: 'button',
        class: 'student-link',
        dataset: { token },
        onclick: () => openHistory({ db: entry.db, token }),
      },
      h('span', { class: 'visually-hidden' }, 'History of '),
      entry.students.join(', ') || name,
    ),
    name !== bareName(entry.db) ? h('span', { class: 'muted' }, ` ${bareName(entry.db)}`) : null,
  );
}

/** @param {ClassEntry} entry */
function databaseRow(entry) {
  return h(
    'tr',
    { dataset: { db: entry.db } },
    nameCell(entry),
    h('td', null, timeText(entry.lastActivity)),
    h('td', { class: 'num' }, String(entry.entries)),
    h('td', { class: 'errors-cell' }, errorsCell(entry)),
    h('td', null, entry.template ? bareName(entry.template) : h('span', { class: 'muted' }, 'none')),
    h('td', null, resetCell(entry)),
  );
}

/**
 * @param {ClassEntry} entry
 * @returns {string}
 */
function nameOf(entry) {
  return entry.students[0] ?? bareName(entry.db);
}

export async function loadClass() {
  const [view, students] = await Promise.all([api('GET', '/class'), studentsByDatabase()]);
  const databases = view.databases
    .map((/** @type {any} */ entry) => ({ ...entry, students: students.get(bareName(entry.db)) ?? [] }))
    .sort((/** @type {ClassEntry} */ a, /** @type {ClassEntry} */ b) => byName(nameOf(a), nameOf(b)));
  const stuck = databases.filter((/** @type {ClassEntry} */ entry) => entry.recentErrors.length > 0).length;
  $('class-summary').textContent =
    `${databases.length} database${databases.length === 1 ? '' : 's'}, ${stuck} with recent errors. By name; a name opens its history.`;
  clear(
    $('class-list'),
    databases.length === 0
      ? h('p', { class: 'muted' }, 'No databases yet.')
      : h(
          'div',
          { class: 'table-wrap', role: 'region', 'aria-label': 'The class', tabindex: '0' },
          h(
            'table',
            { class: 'class-table class-list-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Student', 'Last activity', 'Entries', 'Newest error', 'Copy of', 'Reset'].map((name) =>
                  h('th', { scope: 'col' }, name),
                ),
              ),
            ),
            h('tbody', null, databases.map(databaseRow)),
          ),
        ),
  );
  showRefused(view.refused ?? []);
}

/** Shows the Class tab when this token may see the class; asked without the token prompt. */
export async function probeClass() {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  const token = storedToken();
  if (token !== null) headers['X-Service-Token'] = token;
  let allowed = false;
  try {
    allowed = (await fetch('/class', { headers, cache: 'no-store' })).ok;
  } catch {
    allowed = false;
  }
  $('nav-teacher').hidden = !allowed;
  return allowed;
}

export function initTeacherView() {
  $('class-refresh').addEventListener('click', () => loadClass().catch(notifyError));
}
