// @ts-check
// One entry of a database's history (GET /dbs/{db}/history) as a timeline
// item: when, who, what (the SQL as sent), and how it ended — a failure says
// "Failed" with its code and message in words, not by colour alone — plus the
// time-travel button the entry allows (see restore-flow.js).

import { codeLabel } from './api.js';
import { h } from './dom.js';

/** Statements that never write: no "Restore to before this" on them (every PRAGMA the service accepts only reads). */
const READ_ONLY = /^\s*(SELECT|EXPLAIN|VALUES|PRAGMA)\b/i;

/**
 * Whether restoring to just before `entry` undoes something: a successful write.
 * @param {any} entry a history entry, as GET /dbs/{db}/history answers it
 * @returns {boolean}
 */
export function isWritingEntry(entry) {
  if (!entry.ok || entry.kind !== 'exec') return false;
  if (typeof entry.changes === 'number' && entry.changes > 0) return true;
  return typeof entry.sql === 'string' && !READ_ONLY.test(entry.sql);
}

/**
 * A time as the class reads it: the clock time today, the date and time otherwise.
 * @param {string} iso
 * @returns {string}
 */
export function timeText(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso ?? '');
  const today = date.toDateString() === new Date().toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}

/**
 * @param {string | null | undefined} token
 * @returns {string}
 */
export function whoText(token) {
  return token ?? 'no token';
}

/** @param {number} changes */
function rowsChanged(changes) {
  return `${changes.toLocaleString('en-US')} row${changes === 1 ? '' : 's'} changed`;
}

/**
 * What an entry without SQL did, in words (api.md lists the kinds; an unknown one is named as it is).
 * @param {any} entry
 * @returns {string}
 */
function kindText(entry) {
  const from = typeof entry.from === 'string' ? ` ${entry.from.replace(/\.db$/, '')}` : '';
  /** @type {Record<string, string>} */
  const words = {
    createdb: 'database created',
    dropdb: 'database dropped',
    copydb: `copied from${from}`,
    resetdb: `reset to${from}`,
    begin: 'transaction begun',
    commit: 'transaction committed',
    rollback: `transaction rolled back${entry.reason ? ` (${entry.reason})` : ''}`,
  };
  return words[entry.kind] ?? String(entry.kind);
}

/** @param {any} entry */
function outcome(entry) {
  if (entry.kind === 'restoredb') {
    return h(
      'p',
      { class: 'entry-outcome is-restore' },
      h('strong', null, 'Restore'),
      ` to the state after #${entry.to}`,
      typeof entry.undone === 'number' ? ` (${entry.undone} undone)` : '',
    );
  }
  if (!entry.ok) {
    return h(
      'p',
      { class: 'entry-outcome is-failed' },
      h('strong', null, 'Failed '),
      h('span', { class: 'code-badge' }, codeLabel(entry.code)),
      String(entry.error ?? '').replace(/^\[SQ\d{4}\]\s*/, ''),
      typeof entry.statement === 'number' ? ` (statement ${entry.statement + 1})` : '',
    );
  }
  return h(
    'p',
    { class: 'entry-outcome is-ok' },
    h('strong', null, 'OK'),
    typeof entry.changes === 'number' ? ` · ${rowsChanged(entry.changes)}` : '',
    entry.kind !== 'exec' ? ` · ${kindText(entry)}` : '',
  );
}

/**
 * The entry's button, if any: "Restore to before this" on a write, "Undo this restore" on a restore.
 * @param {any} entry
 * @param {(to: number, entry: any) => void} onRestore
 */
function action(entry, onRestore) {
  if (entry.kind === 'restoredb') {
    return h(
      'button',
      { type: 'button', class: 'undo-restore', onclick: () => onRestore(entry.seq - 1, entry) },
      'Undo this restore',
      h('span', { class: 'visually-hidden' }, ` (#${entry.seq})`),
    );
  }
  if (!isWritingEntry(entry)) return null;
  return h(
    'button',
    { type: 'button', class: 'restore-before', onclick: () => onRestore(entry.seq - 1, entry) },
    'Restore to before this',
    h('span', { class: 'visually-hidden' }, ` (#${entry.seq})`),
  );
}

/**
 * The timeline item of `entry`; `onRestore(to, entry)` runs the restore its button asks for.
 * @param {any} entry
 * @param {(to: number, entry: any) => void} onRestore
 * @returns {HTMLLIElement}
 */
export function historyItem(entry, onRestore) {
  const state = entry.kind === 'restoredb' ? 'restore' : entry.ok ? 'ok' : 'failed';
  return h(
    'li',
    { class: 'entry', dataset: { seq: entry.seq, state, kind: entry.kind ?? '', code: entry.code ?? '' } },
    h(
      'p',
      { class: 'entry-head' },
      h('span', { class: 'entry-seq' }, `#${entry.seq}`),
      ' ',
      h('time', { datetime: entry.time }, timeText(entry.time)),
      ' · ',
      h('span', { class: 'who' }, whoText(entry.token)),
    ),
    outcome(entry),
    typeof entry.sql === 'string' ? h('pre', { class: 'entry-sql' }, h('code', null, entry.sql)) : null,
    action(entry, onRestore),
  );
}
