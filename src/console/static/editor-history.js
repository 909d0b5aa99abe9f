// @ts-check
// Query history, per token and database, kept in this browser
// (localStorage): newest first, a statement run again moves to the top, at
// most HISTORY_LIMIT a database, so a whole term of lessons cannot fill the
// browser's storage. Per token as well: a lab's browser outlives a term, and
// next term's alumno-01 (another token, the same database name) must not find
// last term's student's SQL there.

import { storedToken } from './api.js';

export const HISTORY_LIMIT = 50;
const PREFIX = 'sqlscribe.history.';

/**
 * A short tag of the token, never the token: a 53-bit hash (cyrb53), computed
 * at once (crypto.subtle is async, and absent on a plain-http address). 53
 * bits of a 256-bit random secret tell nothing usable about it.
 * @param {string} text
 * @returns {string}
 */
function tagOf(text) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * Without a token (a server without tokens) the key is the database's alone, as it always was.
 * @param {string} db
 * @returns {string}
 */
function key(db) {
  const token = storedToken();
  const owner = token === null ? '' : `${tagOf(token)}.`;
  return `${PREFIX}${owner}${db === '' ? '(none)' : db}`;
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
