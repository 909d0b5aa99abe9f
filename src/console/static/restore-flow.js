// @ts-check
// "Restore to before this" and "Undo this restore": ask the server
// for a dry run (POST /dbs/{db}/restore with dryRun), say in words what would
// be undone — how many statements, by whom, since when, each with its rows —
// ask, then restore for real. The server decides everything; the console only
// shows the preview it answered.

import { api } from './api.js';
import { h } from './dom.js';
import { askConfirm } from './confirm-dialog.js';
import { timeText, whoText } from './history-entry.js';

/** How many undone entries the question lists one by one; the rest are counted. */
const LISTED = 8;

/**
 * @param {string} db
 * @returns {string}
 */
function restorePath(db) {
  return `/dbs/${encodeURIComponent(db.replace(/\.db$/, ''))}/restore`;
}

/**
 * @param {string} iso
 * @returns {string}
 */
function clock(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? String(iso)
    : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

/**
 * @param {number} count
 * @param {string} word
 * @returns {string}
 */
function plural(count, word) {
  return `${count.toLocaleString('en-US')} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * The undone entries in the order they ran: the first is the one the restore goes back before.
 * @param {any} preview the dry run's answer
 * @returns {any[]}
 */
function inOrder(preview) {
  return [...(preview.undone?.entries ?? [])].sort((a, b) => a.seq - b.seq);
}

/**
 * "DELETE FROM Track (3,503 rows)": one undone entry, short.
 * @param {any} entry
 * @returns {string}
 */
function undoneText(entry) {
  if (entry.kind === 'restoredb') return `the restore #${entry.seq}`;
  const sql = String(entry.sql ?? entry.kind ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const short = sql.length > 70 ? `${sql.slice(0, 67)}…` : sql;
  return typeof entry.changes === 'number' ? `${short} (${plural(entry.changes, 'row')})` : short;
}

/**
 * "undoes 3 statements by alumno-07 since 10:14: DELETE FROM Track (3,503 rows), …"
 * @param {any} preview the dry run's answer
 * @returns {string}
 */
export function previewSentence(preview) {
  const entries = inOrder(preview);
  const count = preview.undone?.count ?? entries.length;
  if (count === 0) return 'undoes nothing: no statement came after that point.';
  const people = [...new Set(entries.map((entry) => whoText(entry.token)))];
  const since = entries.length > 0 ? ` since ${clock(entries[0].time)}` : '';
  const listed = entries.slice(0, 3).map(undoneText).join(', ');
  return `undoes ${plural(count, 'statement')} by ${people.join(', ') || 'unknown'}${since}: ${listed}${count > 3 ? ', …' : ''}`;
}

/**
 * @param {string} db
 * @param {any} preview
 */
function previewBody(db, preview) {
  const entries = inOrder(preview);
  const target = preview.target ?? {};
  return [
    h(
      'p',
      { id: 'restore-summary' },
      `Back to ${db.replace(/\.db$/, '')} as it was after #${target.seq} (${timeText(target.time)}): this ${previewSentence(preview)}`,
    ),
    entries.length === 0
      ? null
      : h(
          'ol',
          { class: 'restore-undone', 'aria-label': 'What this undoes, in the order it ran' },
          entries
            .slice(0, LISTED)
            .map((entry) =>
              h(
                'li',
                { dataset: { seq: entry.seq } },
                `#${entry.seq} ${timeText(entry.time)} · ${whoText(entry.token)}: `,
                h('code', null, undoneText(entry)),
              ),
            ),
        ),
    entries.length > LISTED ? h('p', null, `… and ${plural(entries.length - LISTED, 'more statement')}.`) : null,
    h('p', null, 'A restore is itself written to the history, so it can be undone.'),
  ];
}

/**
 * Restores `db` to the state after entry `to`, once the user has seen the dry
 * run and said yes. Resolves with the server's answer, or null when cancelled.
 * `title` names what is asked ("Restore to before #12?", "Undo restore #20?").
 * @param {string} db
 * @param {number | string} to a seq or a time
 * @param {string} title
 * @returns {Promise<any>} the restore's answer, or null when not confirmed
 */
export async function restoreWithPreview(db, to, title) {
  const preview = await api('POST', restorePath(db), { body: { to, dryRun: true } });
  const yes = await askConfirm({ title, body: previewBody(db, preview), confirm: 'Restore' });
  if (!yes) return null;
  return api('POST', restorePath(db), { body: { to, dryRun: false } });
}
