// @ts-check
// What a constraint error is about, for the error box: the table and columns
// the server names (NOT NULL, UNIQUE, PRIMARY KEY, a foreign key and the
// parent it refers to, a CHECK's name), as a short list a learner can read.

import { h } from './dom.js';

/**
 * A <dl> of the body's table, columns, references and constraint; null when it names none.
 * @param {any} body an error body as the service answered it
 * @returns {HTMLDListElement | null}
 */
export function errorFieldsNode(body) {
  const rows = [];
  if (typeof body?.table === 'string') rows.push(['Table', body.table]);
  if (Array.isArray(body?.columns))
    rows.push([body.columns.length === 1 ? 'Column' : 'Columns', body.columns.join(', ')]);
  const references = body?.references;
  if (references && typeof references.table === 'string' && Array.isArray(references.columns)) {
    rows.push(['Refers to', `${references.table} (${references.columns.join(', ')})`]);
  }
  if (typeof body?.constraint === 'string') rows.push(['Constraint', body.constraint]);
  if (rows.length === 0) return null;
  return h(
    'dl',
    { class: 'error-fields', id: 'sql-error-fields' },
    rows.map(([term, value]) => [h('dt', null, term), h('dd', null, value)]),
  );
}
