// @ts-check
// One result table for the SQL view's results and the Data view's rows: values
// shown by their type (FLOAT 7.0 stays 7.0, NULL unlike the text 'NULL',
// booleans, blobs marked as base64), a header click sorts and shows the
// ORDER BY that does the same, a filter box, paging, foreign keys as links,
// and CSV/JSON downloads of what is shown.

import { h } from './dom.js';

/**
 * A foreign key of a column: the table and column its values point at.
 * @typedef {{ table: string, column: string }} Reference
 */

const PAGE_SIZE = 50;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A FLOAT keeps its fraction: JSON writes 7.0 as 7, SQL shows it as 7.0.
 * @param {unknown} value
 * @returns {string}
 */
function floatText(value) {
  const text = String(value);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}

/**
 * The text of a value as the student typed it in SQL; null stays null (NULL is no text).
 * @param {unknown} value
 * @param {string | null | undefined} type
 * @returns {string | null}
 */
export function valueText(value, type) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (type === 'BOOL' && (value === 0 || value === 1)) return value === 1 ? 'true' : 'false';
  if (type === 'FLOAT' && typeof value === 'number') return floatText(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * @param {unknown} value
 * @param {string | null | undefined} type
 * @param {Reference | null | undefined} reference
 * @param {((reference: Reference, value: unknown) => void) | undefined} onReference
 * @returns {HTMLTableCellElement}
 */
function cell(value, type, reference, onReference) {
  const text = valueText(value, type);
  if (text === null) return h('td', { class: 'null', dataset: { kind: 'null' } }, 'NULL');
  const numeric = typeof value === 'number' && type !== 'BOOL';
  if (type === 'BLOB') {
    return h(
      'td',
      { dataset: { kind: 'blob' } },
      h('span', { class: 'tag', title: 'A BLOB, shown as base64' }, 'base64'),
      ' ',
      text,
    );
  }
  const kind = typeof value === 'boolean' || type === 'BOOL' ? 'bool' : numeric ? 'number' : 'text';
  const content =
    reference && onReference
      ? h(
          'a',
          {
            href: '#data',
            class: 'fk-link',
            title: `Open the row of ${reference.table} whose ${reference.column} is ${text}`,
            onclick: (/** @type {MouseEvent} */ event) => {
              event.preventDefault();
              onReference(reference, value);
            },
          },
          text,
        )
      : text;
  return h('td', { class: numeric ? 'num' : kind === 'bool' ? 'bool' : undefined, dataset: { kind } }, content);
}

/**
 * SQLite's order: NULL, then numbers, then text, then blobs; text by its bytes (BINARY).
 * @param {unknown} value
 * @returns {number}
 */
function rank(value) {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return 1;
  return 2;
}

/**
 * @param {unknown} a
 * @param {unknown} b
 * @returns {number}
 */
export function compareValues(a, b) {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  const x = ra === 1 ? Number(a) : String(a);
  const y = ra === 1 ? Number(b) : String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The ORDER BY a sort stands for: the column's name, or its position when the name is an expression.
 * @param {string[]} columns
 * @param {number} index
 * @param {boolean} desc
 * @returns {string}
 */
export function orderByText(columns, index, desc) {
  const name = columns[index];
  const unique = columns.filter((other) => other === name).length === 1;
  const term =
    unique && IDENTIFIER.test(name)
      ? name
      : unique && !/[()*+\-/|,\s]/.test(name)
        ? `"${name.replace(/"/g, '""')}"`
        : String(index + 1);
  return `ORDER BY ${term}${desc ? ' DESC' : ''}`;
}

/**
 * @param {string | null} text
 * @returns {string}
 */
function csvField(text) {
  if (text === null) return '';
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * CSV (RFC 4180): NULL is an empty field, values as the table shows them.
 * @param {string[]} columns
 * @param {unknown[][]} rows
 * @param {Array<string | null | undefined>} types
 * @returns {string}
 */
export function toCsv(columns, rows, types) {
  const lines = [columns.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map((value, i) => csvField(valueText(value, types[i]))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** What ±Infinity stands as while JSON.stringify runs, then replaced by the number the service sent (toJson). */
const INFINITY_MARK = '\u0000infinity:';

/**
 * JSON: one object per row, values as the service sent them (booleans and NULL kept,
 * ±Infinity as the numbers 9e999 and -9e999, where JSON.stringify would write null).
 * @param {string[]} columns
 * @param {unknown[][]} rows
 * @returns {string}
 */
export function toJson(columns, rows) {
  const text = JSON.stringify(
    rows.map((row) => Object.fromEntries(columns.map((name, i) => [name, row[i] ?? null]))),
    (_key, value) =>
      value === Infinity || value === -Infinity ? `${INFINITY_MARK}${value > 0 ? '9e999' : '-9e999'}` : value,
    2,
  );
  return `${text.replace(/"\\u0000infinity:(-?9e999)"/g, '$1')}\n`;
}

/**
 * @param {string} name
 * @param {string} type
 * @param {string} text
 */
function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * @param {unknown[]} row
 * @param {Array<string | null | undefined>} types
 * @param {string} needle
 * @returns {boolean}
 */
function matches(row, types, needle) {
  if (needle === '') return true;
  return row.some((value, i) => (valueText(value, types[i]) ?? 'NULL').toLowerCase().includes(needle));
}

/**
 * A result table. `columns`, `rows` and `types` (null entries: not known);
 * `references[i]` ({ table, column }) makes column i's values links that call
 * `onReference(reference, value)`. Without `onSort` the table sorts and pages
 * its rows itself; with it (the Data view) a header click calls
 * `onSort(column, desc)`, which re-queries, and `sort` ({ column, desc }) says
 * how the rows given are ordered; with `onFilter` the filter box calls
 * `onFilter(text)` and `filter` is the text the rows given were filtered by.
 * @param {{ columns: string[], rows: unknown[][], types?: Array<string | null>, references?: Array<Reference | null>,
 *   label: string, name?: string, onSort?: (column: string, desc: boolean) => void,
 *   sort?: { column: string, desc: boolean } | null, onFilter?: (text: string) => void, filter?: string,
 *   onReference?: (reference: Reference, value: unknown) => void }} table
 * @returns {HTMLDivElement}
 */
export function resultTable({
  columns,
  rows,
  types = [],
  references = [],
  label,
  name = 'result',
  onSort,
  sort,
  onFilter,
  filter: filtered = '',
  onReference,
}) {
  const view = {
    sortIndex: sort ? columns.indexOf(sort.column) : -1,
    desc: sort?.desc === true,
    filter: onFilter ? '' : filtered,
    page: 0,
  };
  const root = h('div', { class: 'result-table' });
  const body = h('tbody');
  const headRow = h('tr');
  const status = h('p', { class: 'rt-status', 'aria-live': 'polite' });
  const order = h('p', { class: 'rt-order' });
  const prev = h('button', { type: 'button', class: 'rt-prev' }, 'Previous');
  const next = h('button', { type: 'button', class: 'rt-next' }, 'Next');
  const filter = h('input', {
    type: 'search',
    class: 'rt-filter',
    'aria-label': `Filter the rows of ${label}`,
    placeholder: 'Filter rows…',
    autocomplete: 'off',
    spellcheck: 'false',
  });

  function shownRows() {
    const needle = view.filter.toLowerCase();
    const kept = rows.filter((row) => matches(row, types, needle));
    if (!onSort && view.sortIndex >= 0) {
      const i = view.sortIndex;
      // Array sort is stable: rows that tie keep the order the service gave.
      kept.sort((a, b) => (view.desc ? -1 : 1) * compareValues(a[i], b[i]));
    }
    return kept;
  }

  function renderHead() {
    headRow.replaceChildren(
      ...columns.map((column, i) => {
        const sorted = view.sortIndex === i;
        const arrow = sorted ? (view.desc ? ' ▼' : ' ▲') : '';
        const button = h('button', { type: 'button', class: 'rt-sort', onclick: () => sortBy(i) }, column, arrow);
        // The type is drawn by CSS (data-type), so the header's text stays the column's name.
        return h(
          'th',
          {
            scope: 'col',
            'aria-sort': sorted ? (view.desc ? 'descending' : 'ascending') : undefined,
            dataset: types[i] ? { type: types[i] } : undefined,
          },
          button,
        );
      }),
    );
    order.replaceChildren(
      ...(view.sortIndex < 0
        ? ['Click a column to sort by it.']
        : ['Same order as ', h('code', { class: 'rt-order-sql' }, orderByText(columns, view.sortIndex, view.desc))]),
    );
  }

  function renderBody() {
    const kept = shownRows();
    const paged = !onSort && kept.length > PAGE_SIZE;
    const pages = Math.max(1, Math.ceil(kept.length / PAGE_SIZE));
    view.page = Math.min(view.page, pages - 1);
    const slice = paged ? kept.slice(view.page * PAGE_SIZE, (view.page + 1) * PAGE_SIZE) : kept;
    body.replaceChildren(
      ...slice.map((row) =>
        h(
          'tr',
          null,
          row.map((value, i) => cell(value, types[i], references[i], onReference)),
        ),
      ),
    );
    const first = kept.length === 0 ? 0 : paged ? view.page * PAGE_SIZE + 1 : 1;
    const last = paged ? Math.min(kept.length, (view.page + 1) * PAGE_SIZE) : kept.length;
    const filtered = view.filter === '' ? '' : ` (filtered from ${rows.length})`;
    status.textContent =
      kept.length === 0 ? `No rows${filtered}` : `Rows ${first}–${last} of ${kept.length}${filtered}`;
    // Re-queried tables (the Data view) have their own pager and count.
    status.hidden = Boolean(onSort);
    prev.hidden = !paged;
    next.hidden = !paged;
    prev.disabled = view.page === 0;
    next.disabled = view.page >= pages - 1;
  }

  /** @param {number} index */
  function sortBy(index) {
    view.desc = view.sortIndex === index ? !view.desc : false;
    view.sortIndex = index;
    if (onSort) {
      onSort(columns[index], view.desc);
      return;
    }
    view.page = 0;
    renderHead();
    renderBody();
    headRow.children[index]?.querySelector('button')?.focus();
  }

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let filterTimer;
  filter.value = filtered;
  filter.addEventListener('input', () => {
    if (onFilter) {
      // The rows are filtered where they are kept: one query once typing pauses.
      clearTimeout(filterTimer);
      filterTimer = setTimeout(() => onFilter(filter.value), 250);
      return;
    }
    view.filter = filter.value;
    view.page = 0;
    renderBody();
  });
  prev.addEventListener('click', () => {
    view.page--;
    renderBody();
  });
  next.addEventListener('click', () => {
    view.page++;
    renderBody();
  });
  const exportCsv = h(
    'button',
    {
      type: 'button',
      class: 'rt-csv',
      onclick: () => download(`${name}.csv`, 'text/csv', toCsv(columns, shownRows(), types)),
    },
    'CSV',
  );
  const exportJson = h(
    'button',
    {
      type: 'button',
      class: 'rt-json',
      onclick: () => download(`${name}.json`, 'application/json', toJson(columns, shownRows())),
    },
    'JSON',
  );

  renderHead();
  renderBody();
  root.append(
    h(
      'div',
      { class: 'rt-tools' },
      filter,
      h('span', { class: 'rt-export' }, 'Download ', exportCsv, ' ', exportJson),
      order,
    ),
    h(
      'div',
      { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: '0' },
      h('table', null, h('thead', null, headRow), body),
    ),
    h('div', { class: 'rt-pager' }, prev, status, next),
  );
  return root;
}
