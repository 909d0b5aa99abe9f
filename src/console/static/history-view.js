// @ts-check
// The History view: the chosen database's history
// from the server (GET /dbs/{db}/history), newest first, filtered to failed
// entries and/or one person, page by page with the server's `next` cursor;
// each successful write can be restored to just before it, and a restore
// undone (restore-flow.js).

import { api, query } from './api.js';
import { $, clear, field, input } from './dom.js';
import { historyItem } from './history-entry.js';
import { restoreWithPreview } from './restore-flow.js';
import { notify, notifyError, onChange, setDb, state } from './state.js';

const PAGE = 50;

/**
 * The page shown: `before` is the cursor it was asked with (null: the newest), `earlier` the cursors of the pages before it.
 * @type {{ before: number | null, earlier: Array<number | null>, next: number | null }}
 */
const paging = { before: null, earlier: [], next: null };
let loads = 0;

/**
 * @param {string} db
 * @returns {string}
 */
function bareName(db) {
  return db.replace(/\.db$/, '');
}

function filters() {
  return { failed: input('history-failed').checked, token: field('history-token').value.trim() };
}

/**
 * @param {string} db
 * @returns {string}
 */
function historyPath(db) {
  const { failed, token } = filters();
  return `/dbs/${encodeURIComponent(bareName(db))}/history${query({ limit: PAGE, before: paging.before ?? undefined, failed: failed ? 'true' : undefined, token })}`;
}

/**
 * @param {Array<{ seq: number }>} entries
 * @returns {string}
 */
function statusText(entries) {
  const { failed, token } = filters();
  const what = [failed ? 'failed entries' : 'entries', token ? `by ${token}` : null].filter(Boolean).join(' ');
  if (entries.length === 0) return `No ${what} ${paging.before === null ? 'yet' : 'before this point'}.`;
  const first = entries[0].seq;
  const last = entries[entries.length - 1].seq;
  return `${entries.length} ${what}, #${first} to #${last}, newest first.`;
}

function renderPager() {
  field('history-newer').disabled = paging.before === null;
  field('history-older').disabled = paging.next === null;
}

/** Loads the page at `paging.before` for the chosen database. */
export async function loadHistory() {
  clear($('history-db'), state.db === '' ? '(no database chosen)' : bareName(state.db));
  if (state.db === '') {
    clear($('history-list'));
    $('history-status').textContent = 'Choose a database to see its history.';
    return;
  }
  const load = ++loads;
  const db = state.db;
  const answer = await api('GET', historyPath(db));
  // A newer load (another database, other filters) has started: its answer is the one to show.
  if (load !== loads) return;
  paging.next = answer.next ?? null;
  $('history-list').dataset.db = db;
  $('history-status').textContent = statusText(answer.entries);
  clear(
    $('history-list'),
    answer.entries.map((/** @type {any} */ entry) => historyItem(entry, restore)),
  );
  renderPager();
}

function reload({ newest = false } = {}) {
  if (newest) {
    paging.before = null;
    paging.earlier = [];
  }
  return loadHistory().catch(notifyError);
}

/**
 * @param {number} to
 * @param {any} entry
 */
async function restore(to, entry) {
  const db = state.db;
  const title =
    entry.kind === 'restoredb'
      ? `Undo restore #${entry.seq} of ${bareName(db)}?`
      : `Restore ${bareName(db)} to before #${entry.seq}?`;
  try {
    const done = await restoreWithPreview(db, to, title);
    if (done === null) return;
    const undone = done.undone?.count ?? 0;
    notify(
      `${bareName(db)} restored to the state after #${done.restored?.seq ?? to}: ${undone} statement${undone === 1 ? '' : 's'} undone; the restore is entry #${done.seq}, at the top (filters cleared to show it).`,
    );
    // The restore is written under the token that asked for it: the timeline shows it whatever the filters were.
    input('history-failed').checked = false;
    field('history-token').value = '';
    await reload({ newest: true });
    /** @type {HTMLButtonElement | null} */ ($('history-list').querySelector('li button'))?.focus();
  } catch (error) {
    notifyError(error);
  }
}

/**
 * Opens the History view of `db`, filtered to `token` (the Class view's student rows).
 * @param {{ db: string, token?: string }} target
 */
export function openHistory({ db, token = '' }) {
  field('history-token').value = token;
  input('history-failed').checked = false;
  paging.before = null;
  paging.earlier = [];
  setDb(db);
  if (location.hash === '#history') reload();
  else location.hash = '#history';
}

function older() {
  if (paging.next === null) return;
  paging.earlier.push(paging.before);
  paging.before = paging.next;
  reload();
}

function newer() {
  paging.before = paging.earlier.pop() ?? null;
  reload();
}

export function initHistoryView() {
  $('history-filters').addEventListener('submit', (event) => {
    event.preventDefault();
    reload({ newest: true });
  });
  $('history-failed').addEventListener('change', () => reload({ newest: true }));
  $('history-older').addEventListener('click', older);
  $('history-newer').addEventListener('click', newer);
  onChange((what) => {
    if (what === 'db' && !$('view-history').hidden) reload({ newest: true });
  });
}
