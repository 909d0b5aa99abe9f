// Small DOM helpers: elements are built with textContent only, never from HTML
// strings, so values from databases can never become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
}

function setAttributes(element, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.setAttribute('class', value);
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

/** h('p', { class: 'x' }, 'text', child…) */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attrs);
  append(element, children);
  return element;
}

/** The same for SVG elements. */
export function s(tag, attrs, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attrs);
  append(element, children);
  return element;
}

export function $(id) {
  return document.getElementById(id);
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A cell's content: NULL in italics, booleans and numbers as JSON writes them, objects as JSON. */
export function valueNode(value) {
  if (value instanceof Node) return value;
  if (value === null || value === undefined) return h('span', { class: 'null' }, 'NULL');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A table inside its own horizontally scrolling, keyboard-focusable box. */
export function dataTable({ columns, rows, label, className }) {
  const head = h('thead', null, h('tr', null, columns.map((name) => h('th', { scope: 'col' }, name))));
  const body = h('tbody', null, rows.map((row) => h('tr', null, row.map((value) => h('td', { class: typeof value === 'number' ? 'num' : undefined }, valueNode(value))))));
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: '0' }, h('table', { class: className }, head, body));
}
