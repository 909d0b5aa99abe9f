// @ts-check
// The Data view: databases (list, create), the tables of the current database
// with their schema (columns, types, keys, references, indexes), and rows page
// by page.

import { api, ApiError, codeLabel, messageText, query } from './api.js';
import { $, clear, dataTable, field, h } from './dom.js';
import { resultTable } from './result-table.js';
import { rowsStatements } from './rows-sql.js';
import { loadDatabases, notify, notifyError, onChange, openInEditor, setDb, setSession, state } from './state.js';

/** The rows shown: the table, the page, its sort ({ column, desc }) and a key it is filtered at ({ column, value }). */
/**
 * The rows panel: which table, which page, and how it is sorted, narrowed to a key and filtered.
 * @type {{ table: string, offset: number, total: number, sort: { column: string, desc: boolean } | null,
 *   where: { column: string, value: unknown } | null, filter: string }}
 */
const rowsView = { table: '', offset: 0, total: 0, sort: null, where: null, filter: '' };
/** The schema records of the current database's tables, by name: column types and references. */
/**
 * A table's schema record as GET /tables answers it (its columns' fields are read as docs/api.md gives them).
 * @typedef {{ name: string, kind?: string, columns: any[], primaryKey?: string, strict?: boolean, withoutRowid?: boolean,
 *   indexes?: Array<{ name: string, column: string, unique: boolean }>, triggers?: Array<{ name: string, sql: string }> }} TableRecord
 */

/** @type {Map<string, TableRecord>} */
let schemas = new Map();

function renderDatabases() {
  const list = $('db-list');
  const select = field('db-select');
  const single = state.mode === 'single-db';
  $('db-mode').textContent = single
    ? 'Single-database mode: this server serves one file.'
    : state.dbs.length === 0
      ? 'No database yet: create one below.'
      : '';
  $('db-create').hidden = single;
  clear(
    list,
    state.dbs.map((db) =>
      h(
        'li',
        null,
        h('button', { type: 'button', 'aria-pressed': String(db === state.db), onclick: () => setDb(db) }, db),
      ),
    ),
  );
  clear(
    select,
    state.mode === 'single-db' ? null : h('option', { value: '' }, '(none)'),
    state.dbs.map((db) => h('option', { value: db }, db)),
  );
  select.value = state.db;
}

/** @param {string} text */
function flag(text) {
  return h('span', { class: 'tag' }, text);
}

/**
 * @param {any} column a column of the schema record
 * @returns {string}
 */
function defaultText(column) {
  if (!column.hasDefault) return '';
  return column.defaultSql ?? (column.default === null ? 'NULL' : JSON.stringify(column.default));
}

/**
 * A foreign key as its CREATE TABLE would say it: ON UPDATE only when it does something.
 * @param {{ table: string, column: string, onDelete: string, onUpdate?: string }} reference
 * @returns {string}
 */
function referenceText(reference) {
  const onUpdate = reference.onUpdate && reference.onUpdate !== 'RESTRICT' ? ` ON UPDATE ${reference.onUpdate}` : '';
  return `→ ${reference.table}(${reference.column}) ON DELETE ${reference.onDelete}${onUpdate}`;
}

/**
 * A column's type as the card shows it: the declared type beside it when the table spells it otherwise
 * (`NUMERIC (DECIMAL(10,2))`, `BLOB (no type)`).
 * @param {any} column a column of the schema record
 * @returns {string}
 */
function typeText(column) {
  if (column.type === null || column.type === undefined) return 'any (computed)';
  if (column.declaredType === undefined) return column.type;
  return `${column.type} (${column.declaredType === '' ? 'no type' : column.declaredType})`;
}

/**
 * The type a column's values are shown by. A column declared without a type (BLOB affinity, in a
 * table that is not STRICT) keeps each value as it was given, text as text: none, then.
 * @param {any} column a column of the schema record, if known
 * @returns {string | null}
 */
function shownType(column) {
  if (column === undefined || column.declaredType === '') return null;
  return column.type ?? null;
}

/** @param {TableRecord} table */
function tableCard(table) {
  const columns = table.columns.map((/** @type {any} */ column) => [
    h('code', null, column.name),
    typeText(column),
    h(
      'span',
      null,
      column.pk ? flag('PRIMARY KEY') : null,
      column.unique ? flag('UNIQUE') : null,
      column.notNull ? flag('NOT NULL') : null,
    ),
    defaultText(column),
    column.references ? referenceText(column.references) : '',
  ]);
  const indexes = table.indexes ?? [];
  const traits =
    table.kind === 'view'
      ? ['view: a stored SELECT, its types those of the columns it reads']
      : [
          table.primaryKey ? `primary key: ${table.primaryKey}` : 'no primary key',
          table.strict ? 'STRICT (types enforced)' : 'types not enforced',
          table.withoutRowid ? 'WITHOUT ROWID' : null,
        ].filter(Boolean);
  const triggers = table.triggers ?? [];
  return h(
    'article',
    { class: 'table-card', dataset: { table: table.name } },
    h('h3', null, table.name),
    h('p', { class: 'muted' }, traits.join(' · ')),
    dataTable({
      columns: ['Column', 'Type', 'Keys', 'Default', 'References'],
      rows: columns,
      label: `Columns of ${table.name}`,
      className: 'schema',
    }),
    h('p', null, h('strong', null, 'Indexes: '), indexes.length === 0 ? 'none' : null),
    indexes.length === 0
      ? null
      : h(
          'ul',
          { class: 'indexes' },
          indexes.map((index) =>
            h('li', null, h('code', null, index.name), ` on ${index.column}`, index.unique ? ' (unique)' : ''),
          ),
        ),
    triggers.length === 0
      ? null
      : h(
          'p',
          null,
          h('strong', null, 'Triggers: '),
          triggers
            .map((trigger) => h('code', { title: trigger.sql }, trigger.name))
            .flatMap((code, i) => (i === 0 ? [code] : [', ', code])),
        ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'button',
          class: 'primary',
          onclick: () => {
            rowsView.where = null;
            showRows(table.name, 0, true);
          },
        },
        `Rows of ${table.name}`,
      ),
      h(
        'button',
        { type: 'button', onclick: () => openInEditor(`SELECT * FROM "${table.name.replace(/"/g, '""')}" LIMIT 100`) },
        'Query in SQL',
      ),
    ),
  );
}

let tablesGeneration = 0;
/** @type {Promise<void>} */
let newestTablesLoad = Promise.resolve();

/**
 * Shows the tables of the current database. Every call reads them afresh: a read sent before a write
 * (or before another database was chosen) must not answer for after it. Only the newest read renders,
 * whatever order the answers come back in, and each caller resumes once the newest has rendered.
 * @returns {Promise<void>}
 */
export async function loadTables() {
  let load = readTables(++tablesGeneration);
  newestTablesLoad = load;
  await load;
  while (load !== newestTablesLoad) {
    load = newestTablesLoad;
    await load;
  }
}

/** @param {number} generation */
async function readTables(generation) {
  const container = $('tables');
  if (state.db === '') {
    clear(container, h('p', { class: 'muted' }, 'Choose or create a database.'));
    return;
  }
  try {
    const { tables } = await api('GET', `/tables${query({ db: state.db })}`);
    if (generation !== tablesGeneration) return;
    schemas = new Map(tables.map((/** @type {TableRecord} */ table) => [table.name, table]));
    clear(
      container,
      tables.length === 0
        ? h('p', { class: 'muted' }, `No tables in ${state.db} yet: create one in the SQL view.`)
        : tables.map(tableCard),
    );
    if (rowsView.table !== '' && !tables.some((/** @type {TableRecord} */ table) => table.name === rowsView.table))
      hideRows();
    else if (rowsView.table !== '') await showRows(rowsView.table, rowsView.offset, false);
  } catch (error) {
    if (generation !== tablesGeneration) return;
    clear(
      container,
      h('p', { class: 'field-error' }, codeLabel(/** @type {ApiError} */ (error).code), ' ', messageText(error)),
    );
  }
}

function hideRows() {
  Object.assign(rowsView, { table: '', sort: null, where: null, filter: '' });
  $('rows-panel').hidden = true;
}

function limit() {
  return Number(field('rows-limit').value);
}

/** The open transaction session, when it is on the database shown: the Data view then reads through it. */
function readingSession() {
  return state.session && state.session.db.replace(/\.db$/, '') === state.db.replace(/\.db$/, '')
    ? state.session
    : null;
}

/** Says what the Data view shows: the session's own view, rows it wrote included, or committed data. */
function renderSource() {
  const session = readingSession();
  for (const label of [$('data-source'), $('rows-source')]) {
    label.dataset.source = session ? 'session' : 'committed';
    label.textContent = session ? 'Inside your open transaction (not yet committed)' : 'Committed data';
  }
}

/**
 * A page read with SQL through /exec: inside the open session (so its own
 * writes show), or sorted with ORDER BY. A read-only batch journals nothing.
 * @param {string} table
 * @param {number} offset
 * @param {{ id: string } | null} session
 * @returns {Promise<any>} the page, in the shape /rows answers
 */
async function readWithSql(table, offset, session) {
  const record = schemas.get(table) ?? { name: table, columns: [] };
  const statements = rowsStatements({
    table: record,
    where: rowsView.where,
    filter: rowsView.filter,
    sort: rowsView.sort,
    limit: limit(),
    offset,
  });
  const body = session ? { statements } : { db: state.db, statements };
  let answer;
  try {
    answer = await api('POST', '/exec', { body, session: session?.id });
  } catch (error) {
    if (session && error instanceof ApiError && error.status === 404) {
      // This tab committed or rolled the session back while the page was on its way: the rows are the committed ones now.
      if (state.ending === session.id || state.session?.id !== session.id) return readPage(table, offset, null);
      // The session ended on the server (idle rollback): forget it; the change re-reads the committed rows.
      setSession(null);
    }
    throw error;
  }
  const [count, page] = answer.results;
  return { offset, total: Number(count.rows[0][0]), columns: page.columns, rows: page.rows, types: page.types };
}

/**
 * @param {string} table
 * @param {number} offset
 * @param {{ id: string } | null} [session] the session to read in: the open one on this database, by default
 * @returns {Promise<any>}
 */
async function readPage(table, offset, session = readingSession()) {
  if (session || rowsView.sort || rowsView.where || rowsView.filter !== '') return readWithSql(table, offset, session);
  return api('GET', `/rows${query({ db: state.db, table, limit: limit(), offset })}`);
}

/**
 * @param {string} table
 * @param {any} page
 */
function rowsTable(table, page) {
  const columns = new Map((schemas.get(table)?.columns ?? []).map((column) => [column.name, column]));
  const types = page.columns.map(
    (/** @type {string} */ name, /** @type {number} */ i) => page.types?.[i] ?? shownType(columns.get(name)),
  );
  const references = page.columns.map((/** @type {string} */ name) => columns.get(name)?.references ?? null);
  return resultTable({
    columns: page.columns,
    rows: page.rows,
    types,
    references,
    label: `Rows of ${table}`,
    name: table,
    sort: rowsView.sort,
    onSort: (column, desc) => {
      rowsView.sort = { column, desc };
      showRows(table, 0, false);
    },
    filter: rowsView.filter,
    onFilter: (text) => {
      rowsView.filter = text;
      showRows(table, 0, false);
    },
    onReference: (reference, value) => openReference(reference, value),
  });
}

/**
 * A foreign-key link: the referenced table's rows, filtered at the key.
 * @param {{ table: string, column: string }} reference
 * @param {unknown} value
 */
function openReference(reference, value) {
  location.hash = '#data';
  rowsView.sort = null;
  rowsView.where = { column: reference.column, value };
  showRows(reference.table, 0, true);
}

/** @param {string} table */
function renderWhere(table) {
  const where = rowsView.where;
  const box = $('rows-where');
  box.hidden = !where;
  if (!where) return;
  clear(
    box,
    'Showing the rows of ',
    h('code', null, table),
    ' where ',
    h('code', null, `${where.column} = ${JSON.stringify(where.value)}`),
    ' ',
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          rowsView.where = null;
          showRows(table, 0, false);
        },
      },
      'Show all rows',
    ),
  );
}

/** The control of the rows table that has the focus (the filter, or a header by its column), to give it back after a re-query. */
function focusedControl() {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  if (!active || !$('rows').contains(active)) return null;
  if (active.classList.contains('rt-filter'))
    return { filter: true, caret: /** @type {HTMLInputElement} */ (active).selectionStart };
  const th = active.closest('th');
  return th ? { column: th.cellIndex } : null;
}

/** @param {{ filter?: boolean, caret?: number | null, column?: number } | null} focused */
function restoreFocus(focused) {
  if (!focused) return;
  if (focused.filter) {
    const input = /** @type {HTMLInputElement} */ ($('rows').querySelector('.rt-filter'));
    input.focus();
    input.setSelectionRange(focused.caret ?? null, focused.caret ?? null);
  } else {
    $('rows').querySelectorAll('thead th')[/** @type {number} */ (focused.column)]?.querySelector('button')?.focus();
  }
}

/**
 * @param {string} table
 * @param {number} offset
 * @param {boolean} focus
 */
async function showRows(table, offset, focus) {
  // Another table starts unsorted; its key filter is the caller's (openReference sets it, "Rows of" clears it).
  if (table !== rowsView.table) {
    rowsView.sort = null;
    rowsView.filter = '';
  }
  try {
    const page = await readPage(table, offset);
    Object.assign(rowsView, { table, offset: page.offset, total: page.total });
    $('rows-panel').hidden = false;
    $('rows-table').textContent = table;
    renderSource();
    renderWhere(table);
    const first = page.total === 0 ? 0 : page.offset + 1;
    const last = page.offset + page.rows.length;
    const holding = rowsView.filter === '' ? '' : ` holding “${rowsView.filter}”`;
    $('rows-status').textContent =
      page.total === 0 ? `No rows${holding}` : `Rows ${first}–${last} of ${page.total}${holding}`;
    const pager = $('rows-pager');
    /** @param {string} name */
    const pagerButton = (name) => /** @type {HTMLButtonElement} */ (pager.querySelector(`[data-page="${name}"]`));
    pagerButton('first').disabled = page.offset === 0;
    pagerButton('prev').disabled = page.offset === 0;
    pagerButton('next').disabled = last >= page.total;
    pagerButton('last').disabled = last >= page.total;
    const focused = focusedControl();
    clear($('rows'), rowsTable(table, page));
    restoreFocus(focused);
    if (focus) $('rows-h').scrollIntoView({ block: 'start' });
  } catch (error) {
    notifyError(error);
  }
}

/** @param {Event} event */
async function createDatabase(event) {
  event.preventDefault();
  const input = field('db-name');
  const error = $('db-name-error');
  const name = input.value.trim();
  input.removeAttribute('aria-invalid');
  error.textContent = '';
  if (name === '') {
    input.setAttribute('aria-invalid', 'true');
    error.textContent = 'Enter a name.';
    input.focus();
    return;
  }
  try {
    const created = await api('POST', '/dbs', { body: { db: name } });
    input.value = '';
    await loadDatabases();
    setDb(created.db);
    notify(`Database ${created.db} created.`);
  } catch (failure) {
    input.setAttribute('aria-invalid', 'true');
    clear(
      error,
      failure instanceof ApiError && failure.code !== undefined
        ? h('span', { class: 'code-badge' }, codeLabel(failure.code))
        : null,
      messageText(failure),
    );
    input.focus();
  }
}

export function initDataView() {
  $('db-create').addEventListener('submit', createDatabase);
  $('db-select').addEventListener('change', (event) => setDb(/** @type {HTMLSelectElement} */ (event.target).value));
  $('rows-limit').addEventListener('change', () => rowsView.table && showRows(rowsView.table, 0, false));
  $('rows-pager').addEventListener('click', (event) => {
    const page = /** @type {Element} */ (event.target).closest('button')?.dataset.page;
    if (!page || rowsView.table === '') return;
    const size = limit();
    const lastOffset = Math.max(0, Math.floor((rowsView.total - 1) / size) * size);
    const offset = /** @type {Record<string, number>} */ ({
      first: 0,
      prev: Math.max(0, rowsView.offset - size),
      next: rowsView.offset + size,
      last: lastOffset,
    })[page];
    showRows(rowsView.table, offset, false);
  });
  onChange((what) => {
    if (what === 'dbs' || what === 'db') renderDatabases();
    if (what === 'db') {
      hideRows();
      loadTables();
    }
    if (what === 'session' || what === 'db') renderSource();
    // Begin, Commit and Rollback change what the rows shown are: read them again.
    if (what === 'session' && rowsView.table !== '') showRows(rowsView.table, rowsView.offset, false);
  });
  renderSource();
}
