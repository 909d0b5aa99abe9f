// @ts-check
// The SQL the Data view reads a page of rows with when /rows cannot serve it:
// through an open session, sorted, at a foreign key, or filtered. Pure: the
// statements and their parameters for a POST /exec batch.

/**
 * @param {string} name
 * @returns {string}
 */
export function quoteName(name) {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Two statements: the count of the rows kept, and one page of them.
 * `table` is the schema record (name, primaryKey, columns); `where` is
 * { column, value } or null, `filter` a text ('' for none), `sort`
 * { column, desc } or null.
 * @param {{ table: { name: string, primaryKey?: string, columns?: Array<{ name: string }> },
 *   where: { column: string, value: unknown } | null, filter: string, sort: { column: string, desc: boolean } | null,
 *   limit: number, offset: number }} page
 * @returns {Array<{ sql: string, params: unknown[] }>}
 */
export function rowsStatements({ table, where, filter, sort, limit, offset }) {
  const terms = [];
  const params = [];
  if (where) {
    terms.push(`${quoteName(where.column)} = ?`);
    params.push(where.value);
  }
  const columns = table.columns ?? [];
  if (filter !== '' && columns.length > 0) {
    // Rows holding the text in any column, as the table shows it (instr: no LIKE wildcards to escape).
    terms.push(
      `(${columns.map((column) => `instr(lower(CAST(${quoteName(column.name)} AS TEXT)), lower(?)) > 0`).join(' OR ')})`,
    );
    params.push(...columns.map(() => filter));
  }
  const from = `FROM ${quoteName(table.name)}${terms.length > 0 ? ` WHERE ${terms.join(' AND ')}` : ''}`;
  // The key breaks ties, so that LIMIT/OFFSET pages of a sort on a column with repeated values neither skip nor repeat rows.
  const key = (table.primaryKey ?? '').split(',').filter((name) => name !== '' && name !== sort?.column);
  const order = sort
    ? ` ORDER BY ${[`${quoteName(sort.column)}${sort.desc ? ' DESC' : ''}`, ...key.map(quoteName)].join(', ')}`
    : '';
  return [
    { sql: `SELECT count(*) ${from}`, params },
    { sql: `SELECT * ${from}${order} LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`, params },
  ];
}
