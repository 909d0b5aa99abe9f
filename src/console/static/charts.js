// @ts-check
// Horizontal stacked bar charts in inline SVG, drawn at the width of their
// container so that the text stays at the page's size on a projector and on a
// phone. Each chart has a legend, a tooltip per segment (<title>) and its data
// as a table for screen readers and for reading exact numbers.

import { clear, h, s } from './dom.js';

const ROW = 44;
const BAR = 30;
const GAP_TOP = 8;
const FONT = 18;

/**
 * Black or white, whichever reads better on `hex` (WCAG relative luminance).
 * @param {string} hex
 * @returns {string}
 */
function textOn(hex) {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return luminance > 0.179 ? '#000' : '#fff';
}

/**
 * @param {string} color
 * @returns {SVGSVGElement}
 */
function swatch(color) {
  return s(
    'svg',
    { width: 18, height: 18, viewBox: '0 0 18 18', 'aria-hidden': 'true' },
    s('rect', { width: 18, height: 18, rx: 3, fill: color, stroke: '#000', 'stroke-width': 1 }),
  );
}

/**
 * Rough width of a text in pixels at FONT size (0.6 em a character is generous for digits and most words).
 * @param {unknown} text
 * @returns {number}
 */
function textWidth(text) {
  return String(text).length * FONT * 0.6;
}

/**
 * A chart: one bar a row, one segment a series, `empty` the sentence shown without rows.
 * @typedef {{ title: string, rows: Array<{ label: string, values: Record<string, number | undefined> }>,
 *   series: Array<{ key: string, label: string, color: string }>, empty: string }} Chart
 */

/**
 * Draws `chart` into `container`, replacing what was there.
 * @param {HTMLElement} container
 * @param {Chart} chart
 */
export function stackedBars(container, chart) {
  const { title, rows, series, empty } = chart;
  if (rows.length === 0) {
    clear(container, h('p', { class: 'muted' }, empty));
    return;
  }
  const width = Math.max(280, Math.floor(container.clientWidth || 600));
  const charWidth = FONT * 0.6;
  const labelChars = Math.min(
    Math.max(3, ...rows.map((row) => row.label.length)),
    Math.floor((width * 0.4 - 12) / charWidth),
  );
  const labelWidth = Math.ceil(labelChars * charWidth) + 12;
  const totals = rows.map((row) => series.reduce((sum, item) => sum + (row.values[item.key] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const totalWidth = textWidth(max) + 10;
  const barArea = Math.max(60, width - labelWidth - totalWidth);
  const height = GAP_TOP + rows.length * ROW;
  const titleId = `t-${Math.random().toString(36).slice(2)}`;
  const svg = s(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': titleId, 'font-size': FONT },
    s('title', { id: titleId }, title),
  );
  rows.forEach((row, index) => {
    const y = GAP_TOP + index * ROW;
    const label = row.label.length > labelChars ? `${row.label.slice(0, Math.max(1, labelChars - 1))}…` : row.label;
    svg.append(
      s(
        'text',
        { x: labelWidth - 8, y: y + BAR / 2, 'text-anchor': 'end', 'dominant-baseline': 'central', fill: '#111' },
        s('title', null, row.label),
        label,
      ),
    );
    let x = labelWidth;
    for (const item of series) {
      const value = row.values[item.key] ?? 0;
      if (value <= 0) continue;
      const w = (value / max) * barArea;
      svg.append(
        s(
          'rect',
          {
            x,
            y,
            width: Math.max(w, 1),
            height: BAR,
            fill: item.color,
            stroke: '#fff',
            'stroke-width': 1,
            'data-series': item.key,
            'data-value': value,
          },
          s('title', null, `${row.label} · ${item.label}: ${value}`),
        ),
      );
      if (w >= textWidth(value) + 8) {
        svg.append(
          s(
            'text',
            {
              x: x + w / 2,
              y: y + BAR / 2,
              'text-anchor': 'middle',
              'dominant-baseline': 'central',
              fill: textOn(item.color),
              'font-weight': 700,
              'pointer-events': 'none',
            },
            String(value),
          ),
        );
      }
      x += w;
    }
    svg.append(
      s(
        'text',
        { x: x + 6, y: y + BAR / 2, 'dominant-baseline': 'central', fill: '#111', 'font-weight': 700 },
        String(totals[index]),
      ),
    );
  });
  const legend = h(
    'ul',
    { class: 'legend' },
    series.map((item) => h('li', null, swatch(item.color), item.label)),
  );
  const table = h(
    'details',
    null,
    h('summary', null, 'Show the numbers'),
    h(
      'div',
      { class: 'table-wrap', role: 'region', 'aria-label': `${title}: numbers`, tabindex: '0' },
      h(
        'table',
        null,
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, ''),
            series.map((item) => h('th', { scope: 'col' }, item.label)),
            h('th', { scope: 'col' }, 'Total'),
          ),
        ),
        h(
          'tbody',
          null,
          rows.map((row, index) =>
            h(
              'tr',
              null,
              h('th', { scope: 'row' }, row.label),
              series.map((item) => h('td', { class: 'num' }, String(row.values[item.key] ?? 0))),
              h('td', { class: 'num' }, String(totals[index])),
            ),
          ),
        ),
      ),
    ),
  );
  clear(container, legend, svg, table);
}

/**
 * Redraws `draw()` when the container changes width (rotating a phone, resizing a window).
 * @param {HTMLElement} container
 * @param {() => void} draw
 */
export function redrawOnResize(container, draw) {
  let lastWidth = container.clientWidth;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  new ResizeObserver(() => {
    if (container.clientWidth === lastWidth) return;
    lastWidth = container.clientWidth;
    clearTimeout(timer);
    timer = setTimeout(draw, 100);
  }).observe(container);
}
