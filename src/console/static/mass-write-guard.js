// @ts-check
// Before the SQL view sends an UPDATE or DELETE without WHERE (one is enough,
// anywhere in a batch), the console asks, naming the table and how many rows
// it holds now: a learner's `DELETE FROM Track` meant for one row is the
// classic accident. Only the console asks; the API is unchanged.

import { api } from './api.js';
import { h } from './dom.js';
import { askConfirm } from './confirm-dialog.js';
import { unboundedWrites } from './unbounded-writes.js';

/**
 * Rows in `tableSql` now, read-only, through the open session when there is one (it sees its own rows); null when unknown.
 * @param {string} tableSql
 * @param {{ db: string, session?: { id: string } | null }} target
 * @returns {Promise<number | null>}
 */
async function rowCount(tableSql, { db, session }) {
  /** @type {{ sql: string, db?: string }} */
  const body = { sql: `SELECT count(*) FROM ${tableSql}` };
  if (!session && db !== '') body.db = db;
  try {
    const answer = await api('POST', '/exec', { body, session: session?.id });
    const count = answer.results?.[0]?.rows?.[0]?.[0];
    return typeof count === 'number' ? count : null;
  } catch {
    // A table this same run creates, or a typo the run will report: the question still comes.
    return null;
  }
}

/**
 * @param {number | null} count
 * @returns {string}
 */
function rowsText(count) {
  if (count === null) return 'an unknown number of rows (the count failed)';
  return `${count === 0 ? 'no' : `all ${count.toLocaleString('en-US')}`} row${count === 1 ? '' : 's'}`;
}

/**
 * @param {{ verb: string, table: string, index: number, text: string }} write
 * @param {number | null} count
 * @param {number} total
 */
function writeItem(write, count, total) {
  const action = write.verb === 'DELETE' ? 'deletes' : 'changes';
  return h(
    'li',
    { dataset: { table: write.table, rows: count ?? '' } },
    total > 1 ? `Statement ${write.index + 1}: ` : null,
    h('code', null, write.text.length > 120 ? `${write.text.slice(0, 117)}…` : write.text),
    h('br'),
    `has no WHERE: it ${action} `,
    h('strong', null, rowsText(count)),
    ' of ',
    h('strong', null, write.table),
    '.',
  );
}

/**
 * Resolves true when `sql` may be sent: nothing touches a whole table, or the user said so.
 * @param {string} sql
 * @param {{ db: string, session?: { id: string } | null }} target
 * @param {number} statementCount
 * @returns {Promise<boolean>}
 */
export async function confirmMassWrites(sql, target, statementCount) {
  const writes = unboundedWrites(sql);
  if (writes.length === 0) return true;
  const counts = await Promise.all(writes.map((write) => rowCount(write.tableSql, target)));
  return askConfirm({
    title: writes.length === 1 ? `Change every row of ${writes[0].table}?` : 'Change every row of these tables?',
    body: [
      h(
        'ul',
        { class: 'mass-writes' },
        writes.map((write, i) => writeItem(write, counts[i] ?? null, statementCount)),
      ),
      h('p', null, 'Add a WHERE to touch only some rows. Cancel sends nothing.'),
    ],
    confirm: 'Run anyway',
  });
}
