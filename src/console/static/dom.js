// @ts-check
// Small DOM helpers: elements are built with textContent only, never from HTML
// strings, so values from databases can never become markup.

/**
 * What h() and s() take as children: nodes, text, and lists of them nested to any depth (typed loosely below the
 * first level: JSDoc has no recursive alias); null, undefined and false are left out, so that a child can be
 * written as `condition && node`.
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | ReadonlyArray<unknown>} Child
 */

/**
 * Attributes by name: `class`, `dataset` (an object copied into element.dataset), `on<event>` listeners, and
 * the rest as attribute values (true is an empty attribute; null, undefined and false leave it out).
 * @typedef {Record<string, unknown>} Attributes
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * @param {Element} parent
 * @param {Child[]} children
 */
function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
}

/**
 * @param {HTMLElement | SVGElement} element
 * @param {Attributes | null | undefined} attrs
 */
function setAttributes(element, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.setAttribute('class', String(value));
    else if (name.startsWith('on') && typeof value === 'function')
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * h('p', { class: 'x' }, 'text', child…)
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attrs);
  append(element, children);
  return element;
}

/**
 * The same for SVG elements.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes | null} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attrs, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attrs);
  append(element, children);
  return element;
}

/**
 * The page's element with this id. The ids are index.html's own, present from the start, so the lookup is taken
 * as found; field() and input() below, or a cast at the call, say which kind of element a view expects.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  return /** @type {HTMLElement} */ (document.getElementById(id));
}

/**
 * A form control by id, for its value and disabled state.
 * @param {string} id
 * @returns {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement}
 */
export function field(id) {
  return /** @type {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement} */ ($(id));
}

/**
 * An input by id, for what only inputs have (checked, readOnly, selection).
 * @param {string} id
 * @returns {HTMLInputElement}
 */
export function input(id) {
  return /** @type {HTMLInputElement} */ ($(id));
}

/**
 * Empties an element and appends new children to it.
 * @template {Element} E
 * @param {E} element
 * @param {...Child} children
 * @returns {E}
 */
export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/**
 * A cell's content: NULL in italics, booleans and numbers as JSON writes them, objects as JSON.
 * @param {unknown} value
 * @returns {Node | string}
 */
export function valueNode(value) {
  if (value instanceof Node) return value;
  if (value === null || value === undefined) return h('span', { class: 'null' }, 'NULL');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A table inside its own horizontally scrolling, keyboard-focusable box.
 * @param {{ columns: string[], rows: unknown[][], label: string, className?: string }} table
 * @returns {HTMLDivElement}
 */
export function dataTable({ columns, rows, label, className }) {
  const head = h(
    'thead',
    null,
    h(
      'tr',
      null,
      columns.map((name) => h('th', { scope: 'col' }, name)),
    ),
  );
  const body = h(
    'tbody',
    null,
    rows.map((row) =>
      h(
        'tr',
        null,
        row.map((value) => h('td', { class: typeof value === 'number' ? 'num' : undefined }, valueNode(value))),
      ),
    ),
  );
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: '0' },
    h('table', { class: className }, head, body),
  );
}
