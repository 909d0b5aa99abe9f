// The Data view: databases (list, create), the tables of the current database
// with their schema (columns, types, keys, references, indexes), and rows page
// by page.

import { api, ApiError, codeLabel, messageText, query } from './api.js';
import { $, clear, dataTable, h } from './dom.js';
import { loadDatabases, notify, notifyError, onChange, setDb, state } from './state.js';
import { showInEditor } from './sql-view.js';

const rowsView = { table: '', offset: 0, total: 0 };

function renderDatabases() {
  const list = $('db-list');
  const select = $('db-select');
  const single = state.mode === 'single-db';
  $('db-mode').textContent = single ? 'Single-database mode: this server serves one file.' : state.dbs.length === 0 ? 'No database yet: create one below.' : '';
  $('db-create').hidden = single;
  clear(list, state.dbs.map((db) => h('li', null, h('button', { type: 'button', 'aria-pressed': String(db === state.db), onclick: () => setDb(db) }, db))));
  clear(select, state.mode === 'single-db' ? null : h('option', { value: '' }, '(none)'), state.dbs.map((db) => h('option', { value: db }, db)));
  select.value = state.db;
}

function flag(text) {
  return h('span', { class: 'tag' }, text);
}

function defaultText(column) {
  if (!column.hasDefault) return '';
  return column.defaultSql ?? (column.default === null ? 'NULL' : JSON.stringify(column.default));
}

function tableCard(table) {
  const columns = table.columns.map((column) => [
    h('code', null, column.name),
    column.type ?? 'any (computed)',
    h('span', null, column.pk ? flag('PRIMARY KEY') : null, column.unique ? flag('UNIQUE') : null, column.notNull ? flag('NOT NULL') : null),
    defaultText(column),
    column.references ? `→ ${column.references.table}(${column.references.column}) ON DELETE ${column.references.onDelete}` : '',
  ]);
  const indexes = table.indexes ?? [];
  const traits = table.kind === 'view'
    ? ['view: a stored SELECT, its types those of the columns it reads']
    : [table.primaryKey ? `primary key: ${table.primaryKey}` : 'no primary key', table.strict ? 'STRICT (types enforced)' : 'types not enforced', table.withoutRowid ? 'WITHOUT ROWID' : null].filter(Boolean);
  const triggers = table.triggers ?? [];
  return h('article', { class: 'table-card', dataset: { table: table.name } },
    h('h3', null, table.name),
    h('p', { class: 'muted' }, traits.join(' · ')),
    dataTable({ columns: ['Column', 'Type', 'Keys', 'Default', 'References'], rows: columns, label: `Columns of ${table.name}`, className: 'schema' }),
    h('p', null, h('strong', null, 'Indexes: '), indexes.length === 0 ? 'none' : null),
    indexes.length === 0 ? null : h('ul', { class: 'indexes' }, indexes.map((index) => h('li', null, h('code', null, index.name), ` on ${index.column}`, index.unique ? ' (unique)' : ''))),
    triggers.length === 0 ? null : h('p', null, h('strong', null, 'Triggers: '), triggers.map((trigger) => h('code', { title: trigger.sql }, trigger.name)).flatMap((code, i) => (i === 0 ? [code] : [', ', code]))),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'primary', onclick: () => showRows(table.name, 0, true) }, `Rows of ${table.name}`),
      h('button', { type: 'button', onclick: () => openInEditor(`SELECT * FROM "${table.name.replace(/"/g, '""')}" LIMIT 100`) }, 'Query in SQL')));
}

function openInEditor(sql) {
  showInEditor(sql);
}

let tablesLoad = null;
let tablesLoadDb = '';

/** Shows the tables of the current database; calls while one load of that database runs share it. */
export function loadTables() {
  if (tablesLoad && tablesLoadDb === state.db) return tablesLoad;
  tablesLoadDb = state.db;
  const load = readTables().finally(() => {
    if (tablesLoad === load) tablesLoad = null;
  });
  tablesLoad = load;
  return load;
}

async function readTables() {
  const container = $('tables');
  if (state.db === '') {
    clear(container, h('p', { class: 'muted' }, 'Choose or create a database.'));
    return;
  }
  try {
    const { tables } = await api('GET', `/tables${query({ db: state.db })}`);
    clear(container, tables.length === 0 ? h('p', { class: 'muted' }, `No tables in ${state.db} yet: create one in the SQL view.`) : tables.map(tableCard));
    if (rowsView.table !== '' && !tables.some((table) => table.name === rowsView.table)) hideRows();
    else if (rowsView.table !== '') await showRows(rowsView.table, rowsView.offset, false);
  } catch (error) {
    clear(container, h('p', { class: 'field-error' }, codeLabel(error.code), ' ', messageText(error)));
  }
}

function hideRows() {
  rowsView.table = '';
  $('rows-panel').hidden = true;
}

function limit() {
  return Number($('rows-limit').value);
}

async function showRows(table, offset, focus) {
  try {
    const page = await api('GET', `/rows${query({ db: state.db, table, limit: limit(), offset })}`);
    Object.assign(rowsView, { table, offset: page.offset, total: page.total });
    $('rows-panel').hidden = false;
    $('rows-table').textContent = table;
    const first = page.total === 0 ? 0 : page.offset + 1;
    const last = page.offset + page.rows.length;
    $('rows-status').textContent = page.total === 0 ? 'No rows' : `Rows ${first}–${last} of ${page.total}`;
    const pager = $('rows-pager');
    pager.querySelector('[data-page="first"]').disabled = page.offset === 0;
    pager.querySelector('[data-page="prev"]').disabled = page.offset === 0;
    pager.querySelector('[data-page="next"]').disabled = last >= page.total;
    pager.querySelector('[data-page="last"]').disabled = last >= page.total;
    clear($('rows'), dataTable({ columns: page.columns, rows: page.rows, label: `Rows of ${table}` }));
    if (focus) $('rows-h').scrollIntoView({ block: 'start' });
  } catch (error) {
    notifyError(error);
  }
}

async function createDatabase(event) {
  event.preventDefault();
  const input = $('db-name');
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
    clear(error, failure instanceof ApiError && failure.code !== undefined ? h('span', { class: 'code-badge' }, codeLabel(failure.code)) : null, messageText(failure));
    input.focus();
  }
}

export function initDataView() {
  $('db-create').addEventListener('submit', createDatabase);
  $('db-select').addEventListener('change', (event) => setDb(event.target.value));
  $('rows-limit').addEventListener('change', () => rowsView.table && showRows(rowsView.table, 0, false));
  $('rows-pager').addEventListener('click', (event) => {
    const page = event.target.closest('button')?.dataset.page;
    if (!page || rowsView.table === '') return;
    const size = limit();
    const lastOffset = Math.max(0, Math.floor((rowsView.total - 1) / size) * size);
    const offset = { first: 0, prev: Math.max(0, rowsView.offset - size), next: rowsView.offset + size, last: lastOffset }[page];
    showRows(rowsView.table, offset, false);
  });
  onChange((what) => {
    if (what === 'dbs' || what === 'db') renderDatabases();
    if (what === 'db') {
      hideRows();
      loadTables();
    }
  });
}
