// @ts-check
// Links that reopen a query: `/?db=<database>&sql=<statements>#sql`. Opening
// one selects the database and fills the editor; it never runs anything, so a
// link passed around a class cannot change data by being clicked.

/**
 * The link to the console with `db` and `sql`, on the page's own origin.
 * @param {string} db
 * @param {string} sql
 * @param {string} [base]
 * @returns {string}
 */
export function queryLink(db, sql, base = location.href) {
  const url = new URL('/', base);
  if (db !== '') url.searchParams.set('db', db);
  url.searchParams.set('sql', sql);
  url.hash = 'sql';
  return url.href;
}

/**
 * The database and SQL a link carries, or null when the URL has no `sql`.
 * @param {string} [href]
 * @returns {{ db: string, sql: string } | null}
 */
export function readQueryLink(href = location.href) {
  const url = new URL(href);
  const sql = url.searchParams.get('sql');
  if (sql === null) return null;
  return { db: url.searchParams.get('db') ?? '', sql };
}

/** Drops the link's parameters from the address bar, so a reload keeps what was typed since. */
export function forgetQueryLink() {
  const url = new URL(location.href);
  url.searchParams.delete('db');
  url.searchParams.delete('sql');
  history.replaceState(history.state, '', url.href);
}
