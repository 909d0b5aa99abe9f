// @ts-check
// Finds the UPDATE and DELETE statements of a script that have no WHERE: they
// touch every row of their table, which a learner rarely means. The script is
// split by the console's one splitter (statement-spans.js, the server's own);
// each statement is then read word by word here, skipping strings, quoted
// names and comments, counting parentheses so that a WHERE inside a subquery
// (`UPDATE t SET x = (SELECT … WHERE …)`) does not count as the statement's.

import { statementSpans } from './statement-spans.js';

/** @type {Record<string, string>} */
const QUOTES = { "'": "'", '"': '"', '`': '`', '[': ']' };

/**
 * A word of a statement: its text, its upper case (null for a quoted name), and how deep in parentheses it is.
 * @typedef {{ text: string, upper: string | null, quoted: boolean, depth: number }} Word
 */

/**
 * The statement's top-level words and names, each { text, upper, quoted, depth }.
 * @param {string} sql
 * @returns {Word[]}
 */
function words(sql) {
  /** @type {Word[]} */
  const found = [];
  let depth = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close === -1 ? sql.length : close + 2;
    } else if (c in QUOTES) {
      const end = closeQuote(sql, i, QUOTES[c]);
      found.push({ text: sql.slice(i, end), upper: null, quoted: true, depth });
      i = end;
    } else if (/[\p{L}\p{N}_$]/u.test(c)) {
      let end = i + 1;
      while (end < sql.length && /[\p{L}\p{N}_$]/u.test(sql[end])) end++;
      const text = sql.slice(i, end);
      found.push({ text, upper: text.toUpperCase(), quoted: false, depth });
      i = end;
    } else {
      if (c === '(') depth++;
      else if (c === ')') depth = Math.max(0, depth - 1);
      else if (c === '.') found.push({ text: '.', upper: '.', quoted: false, depth });
      i++;
    }
  }
  return found;
}

/**
 * Just past the quote that closes the one at `start` (a doubled quote stands for one; `]` is never doubled).
 * @param {string} sql
 * @param {number} start
 * @param {string} close
 * @returns {number}
 */
function closeQuote(sql, start, close) {
  let i = start + 1;
  for (;;) {
    const at = sql.indexOf(close, i);
    if (at === -1) return sql.length;
    if (close === ']' || sql[at + 1] !== close) return at + 1;
    i = at + 2;
  }
}

/**
 * The name as SQLite reads it: quotes removed, a doubled quote made single.
 * @param {string} text
 * @returns {string}
 */
function unquote(text) {
  const open = text[0];
  if (!(open in QUOTES)) return text;
  const inner = text.slice(1, -1);
  return open === '[' ? inner : inner.split(open + open).join(open);
}

/**
 * `[schema .] name` starting at index `at` of `list`: its source text and its bare name, or null.
 * @param {Word[]} list
 * @param {number} at
 * @returns {{ sql: string, name: string } | null}
 */
function tableNameAt(list, at) {
  const first = list[at];
  if (!first || first.depth !== 0) return null;
  if (list[at + 1]?.text === '.' && list[at + 2]) {
    const table = list[at + 2];
    return { sql: `${first.text}.${table.text}`, name: unquote(table.text) };
  }
  return { sql: first.text, name: unquote(first.text) };
}

/**
 * Index of the statement's verb: its first word, or after a WITH clause the first top-level DML word.
 * @param {Word[]} list
 * @returns {number}
 */
function verbIndex(list) {
  if (list[0]?.upper !== 'WITH') return 0;
  return list.findIndex(
    (word) =>
      word.depth === 0 && ['DELETE', 'UPDATE', 'INSERT', 'REPLACE', 'SELECT', 'VALUES'].includes(word.upper ?? ''),
  );
}

/**
 * { verb, table } when `sql` (one statement) is an UPDATE or DELETE without a top-level WHERE, else null.
 * @param {string} sql
 * @returns {{ verb: string, table: string, tableSql: string } | null}
 */
export function unboundedWrite(sql) {
  const list = words(sql);
  const at = verbIndex(list);
  const verb = list[at]?.upper;
  if (verb !== 'UPDATE' && verb !== 'DELETE') return null;
  let nameAt = at + 1;
  if (verb === 'DELETE' && list[nameAt]?.upper === 'FROM') nameAt++;
  // UPDATE OR REPLACE|IGNORE|ABORT|FAIL|ROLLBACK t …
  if (verb === 'UPDATE' && list[nameAt]?.upper === 'OR') nameAt += 2;
  const table = tableNameAt(list, nameAt);
  if (table === null) return null;
  const hasWhere = list.slice(nameAt).some((word) => word.depth === 0 && word.upper === 'WHERE');
  return hasWhere ? null : { verb, table: table.name, tableSql: table.sql };
}

/**
 * Every statement of `script` that would touch all rows of its table, with its index in the script.
 * @param {string} script
 * @returns {Array<{ verb: string, table: string, tableSql: string, index: number, text: string }>}
 */
export function unboundedWrites(script) {
  const found = statementSpans(script)
    .statements.map((statement, index) => ({ ...unboundedWrite(statement.text), index, text: statement.text }))
    .filter((write) => write.verb !== undefined);
  return /** @type {Array<{ verb: string, table: string, tableSql: string, index: number, text: string }>} */ (found);
}
