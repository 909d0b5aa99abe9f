// The Class view, a teacher's: every database of the class with its last
// activity and its students' recent errors (GET /class, admin only), a
// button that returns a student's copy to its template
// (POST /dbs/{db}/reset), and the requests the server refused (who, from
// where, which database, which code). The tab shows only when GET /class answers, that
// is for an admin token (or a server without tokens).

import { api, codeLabel, storedToken } from './api.js';
import { $, clear, h } from './dom.js';
import { notify, notifyError } from './state.js';

function bareName(db) {
  return db.replace(/\.db$/, '');
}

function timeText(ts) {
  if (ts === null) return 'no activity seen';
  const date = new Date(ts);
  return Number.isNaN(date.getTime()) ? ts : date.toLocaleString();
}

function errorItem(error) {
  return h('li', { class: 'class-error', dataset: { code: error.code } },
    h('span', { class: 'code-badge' }, codeLabel(error.code)),
    h('span', { class: 'who' }, error.tokenName ?? 'anonymous'),
    ' ',
    h('time', { datetime: error.ts }, new Date(error.ts).toLocaleTimeString()),
    error.statement ? h('code', { class: 'statement' }, error.statement) : null,
    h('span', { class: 'class-error-text' }, error.error.replace(/^\[SQ\d{4}\]\s*/, '')));
}

function refusalRow(refusal) {
  return h('tr', { class: 'class-refusal', dataset: { code: refusal.code } },
    h('td', null, h('time', { datetime: refusal.ts }, new Date(refusal.ts).toLocaleTimeString())),
    h('th', { scope: 'row', class: 'who' }, refusal.tokenName ?? 'no token'),
    h('td', null, refusal.db === null ? h('span', { class: 'muted' }, '—') : bareName(refusal.db)),
    h('td', null, h('span', { class: 'code-badge' }, codeLabel(refusal.code)), ' ', refusal.error.replace(/^\[SQ\d{4}\]\s*/, '')),
    h('td', null, h('code', null, refusal.request)),
    h('td', null, refusal.client));
}

function showRefused(refused) {
  clear($('class-refused'), refused.length === 0
    ? h('p', { class: 'muted' }, 'No request refused.')
    : h('div', { class: 'table-wrap', role: 'region', 'aria-label': 'Refused requests', tabindex: '0' },
      h('table', { class: 'class-table refused-table' },
        h('thead', null, h('tr', null, ['Time', 'Token', 'Database', 'Refused', 'Request', 'Client'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', null, refused.map(refusalRow)))));
}

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

function databaseRow(entry) {
  const errors = entry.recentErrors;
  const resetCell = entry.template
    ? h('button', { type: 'button', class: 'reset', dataset: { db: entry.db }, onclick: (event) => reset(entry.db, entry.template, event.currentTarget) },
      'Reset ', h('span', { class: 'visually-hidden' }, `${bareName(entry.db)} `), 'to template')
    : h('span', { class: 'muted' }, '—');
  return h('tr', { dataset: { db: entry.db } },
    h('th', { scope: 'row' }, bareName(entry.db)),
    h('td', null, entry.template ? bareName(entry.template) : h('span', { class: 'muted' }, 'none')),
    h('td', null, timeText(entry.lastActivity)),
    h('td', { class: 'num' }, String(entry.entries)),
    h('td', null, errors.length === 0
      ? h('span', { class: 'muted' }, 'none')
      : h('ul', { class: 'class-errors', 'aria-label': `Recent errors of ${bareName(entry.db)}` }, errors.slice(0, 5).map(errorItem))),
    h('td', null, resetCell));
}

export async function loadClass() {
  const view = await api('GET', '/class');
  const databases = [...view.databases].sort((a, b) => String(b.lastActivity ?? '').localeCompare(String(a.lastActivity ?? '')));
  const stuck = databases.filter((entry) => entry.recentErrors.length > 0).length;
  $('class-summary').textContent = `${databases.length} database${databases.length === 1 ? '' : 's'}, ${stuck} with recent errors. Most recent activity first.`;
  clear($('class-list'), databases.length === 0
    ? h('p', { class: 'muted' }, 'No databases yet.')
    : h('div', { class: 'table-wrap', role: 'region', 'aria-label': 'The class', tabindex: '0' },
      h('table', { class: 'class-table' },
        h('thead', null, h('tr', null, ['Database', 'Template', 'Last activity', 'Entries', 'Recent errors (newest first)', 'Reset'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', null, databases.map(databaseRow)))));
  showRefused(view.refused ?? []);
}

/** Shows the Class tab when this token may see the class; asked without the token prompt. */
export async function probeClass() {
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
