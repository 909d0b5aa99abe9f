// @ts-check
// Query history, per database, kept in this browser (localStorage): newest
// first, a statement run again moves to the top, at most HISTORY_LIMIT a
// database, so a whole term of lessons cannot fill the browser's storage.

export const HISTORY_LIMIT = 50;
const PREFIX = 'sqlscribe.history.';

/**
 * @param {string} db
 * @returns {string}
 */
function key(db) {
  return `${PREFIX}${db === '' ? '(none)' : db}`;
}

/**
 * The runs of `db`, newest first; a damaged entry reads as empty.
 * @param {string} db
 * @param {Storage} [storage]
 * @returns {string[]}
 */
export function readHistory(db, storage = localStorage) {
  try {
    const list = JSON.parse(storage.getItem(key(db)) ?? '[]');
    return Array.isArray(list) ? list.filter((sql) => typeof sql === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Records `sql` as the newest run of `db` and returns the new list.
 * @param {string} db
 * @param {string} sql
 * @param {Storage} [storage]
 * @returns {string[]}
 */
export function addToHistory(db, sql, storage = localStorage) {
  const text = sql.trim();
  if (text === '') return readHistory(db, storage);
  const list = [text, ...readHistory(db, storage).filter((old) => old !== text)].slice(0, HISTORY_LIMIT);
  try {
    storage.setItem(key(db), JSON.stringify(list));
  } catch {
    // Storage full or refused (private mode): the history is a convenience, the run itself went through.
  }
  return list;
}
