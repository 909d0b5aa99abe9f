// @ts-check
// The Pilots view: a form for a classroom pilot record, checked in the browser
// against the schema the server publishes (GET /pilots/schema) and showing the
// server's own refusals by field; the list of records (GET /pilots); and two
// charts: evidence by school level (GET /pilots/summary) and decisions per date.

import { api, ApiError, codeLabel, messageText, query } from './api.js';
import { $, clear, dataTable, field, h } from './dom.js';
import { redrawOnResize, stackedBars } from './charts.js';
import { notify, notifyError } from './state.js';
import { validate } from './validate.js';

const EVIDENCE = [
  { key: 'aun_no_observable', label: 'Aún no observable', color: '#b2182b' },
  { key: 'en_desarrollo', label: 'En desarrollo', color: '#f4a582' },
  { key: 'logrado', label: 'Logrado', color: '#92c5de' },
  { key: 'profundizado', label: 'Profundizado', color: '#2166ac' },
];
const DECISIONS = [
  { key: 'conservar', label: 'Conservar', color: '#1b7837' },
  { key: 'corregir', label: 'Corregir', color: '#fdb863' },
  { key: 'volver_a_pilotar', label: 'Volver a pilotar', color: '#762a83' },
  { key: 'retirar', label: 'Retirar', color: '#404040' },
];
const PAGE = 10;

/** @type {any} the pilot record's JSON Schema, as GET /pilots/schema answers it */
let schema;
let listOffset = 0;
/** @type {any} GET /pilots/summary */
let summary;
/** @type {any[]} */
let allPilots = [];

/* ---------- the form ---------- */

/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control */

/** @returns {HTMLFormElement} */
function form() {
  return /** @type {HTMLFormElement} */ ($('pilot-form'));
}

/** The record the form describes: empty inputs are left out, so the schema reports them as required. */
function readForm() {
  /** @type {Record<string, any>} */
  const record = {};
  for (const input of /** @type {NodeListOf<Control>} */ (
    form().querySelectorAll('input[name], select[name], textarea[name]')
  )) {
    const raw = input.value.trim();
    const kind = input.dataset.kind;
    let value;
    if (kind === 'lines')
      value = raw
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
    else if (kind === 'number' && input.validity.badInput)
      value = raw; // not a number: the schema says so
    else if (raw === '') continue;
    else if (kind === 'list')
      value = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    else if (kind === 'number') value = Number(raw);
    else value = raw;
    const keys = input.name.split('.');
    let target = record;
    for (const key of keys.slice(0, -1)) target = target[key] ??= {};
    target[keys[keys.length - 1]] = value;
  }
  return record;
}

/**
 * @param {string} path
 * @returns {HTMLElement | null}
 */
function fieldFor(path) {
  // The nearest field for a path: /scope/class_codes/0 is shown at /scope/class_codes.
  for (let p = path; p !== '' && p !== '/'; p = p.slice(0, p.lastIndexOf('/'))) {
    const field = /** @type {HTMLElement | null} */ (form().querySelector(`.field[data-path="${CSS.escape(p)}"]`));
    if (field) return field;
  }
  return null;
}

function clearErrors() {
  for (const field of form().querySelectorAll('.field')) {
    /** @type {HTMLElement} */ (field.querySelector(':scope > .field-error')).textContent = '';
    for (const control of field.querySelectorAll(':scope > input, :scope > select, :scope > textarea'))
      control.removeAttribute('aria-invalid');
  }
  clear($('pilot-form-errors'));
}

/**
 * @param {Element} control
 * @param {string} errorId
 */
function describeBy(control, errorId) {
  const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean));
  ids.add(errorId);
  control.setAttribute('aria-describedby', [...ids].join(' '));
}

/**
 * Shows violations ({ path, message }) at their fields; those without a field
 * are listed above the form. Focuses the field in error that comes first in
 * the form, whatever order the violations came in.
 * @param {Array<{ path: string, message: string }>} violations
 * @param {import('./dom.js').Child} heading
 */
function showViolations(violations, heading) {
  clearErrors();
  const loose = [];
  /** @type {Control | null} */
  let first = null;
  for (const violation of violations) {
    const field = fieldFor(violation.path);
    if (!field) {
      loose.push(violation);
      continue;
    }
    const error = /** @type {HTMLElement} */ (field.querySelector(':scope > .field-error'));
    error.textContent =
      error.textContent === ''
        ? violation.message.replace(/^./, (c) => c.toUpperCase())
        : `${error.textContent}; ${violation.message}`;
    const control = /** @type {Control | null} */ (
      field.querySelector(':scope > input, :scope > select, :scope > textarea')
    );
    // A group's violation (/scope is required) is marked on its empty controls, so that the focused one is marked too.
    const marked = control
      ? [control]
      : [.../** @type {NodeListOf<Control>} */ (field.querySelectorAll('input, select, textarea'))].filter(
          (input) => input.value.trim() === '',
        );
    for (const each of marked) {
      each.setAttribute('aria-invalid', 'true');
      describeBy(each, error.id);
    }
    const target = marked[0] ?? /** @type {Control | null} */ (field.querySelector('input, select, textarea'));
    // Violations come in the schema's order (its required names before the values' checks): the first to show is the first on the page.
    if (target && (first === null || first.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_PRECEDING))
      first = target;
  }
  const summaryBox = $('pilot-form-errors');
  clear(
    summaryBox,
    h('p', null, h('strong', null, heading)),
    loose.length === 0
      ? null
      : h(
          'ul',
          null,
          loose.map((v) => h('li', null, h('code', null, v.path), ' ', v.message)),
        ),
  );
  (first ?? summaryBox).focus?.();
  if (!first) summaryBox.scrollIntoView({ block: 'nearest' });
}

/**
 * The server's refusal, at the fields it concerns.
 * @param {import('./api.js').ApiError} error
 */
function showServerError(error) {
  const code = error.code;
  const heading = h(
    'span',
    null,
    h('span', { class: 'code-badge' }, codeLabel(code) || `HTTP ${error.status}`),
    messageText(error),
  );
  let violations = [];
  if (Array.isArray(error.body.violations)) violations = error.body.violations;
  else if (code === 1017) {
    const message = `must not contain personal data (found: ${(error.body.kinds ?? []).join(', ') || 'personal data'})`;
    violations = [
      { path: '/notes_without_personal_data', message },
      { path: '/incidents', message },
    ];
  } else if (code === 2014)
    violations = [
      { path: '/commit', message: 'the last pilot of this scope decided to correct this commit: pilot another one' },
    ];
  else if (code === 2013)
    violations = [{ path: '/scope', message: 'this scope was retired: no further pilot is accepted for it' }];
  showViolations(violations, heading);
}

/** @param {Event} event */
async function submit(event) {
  event.preventDefault();
  const record = readForm();
  if (!schema) await loadSchema();
  const violations = validate(schema, record);
  if (violations.length > 0) {
    showViolations(
      violations,
      `The record has ${violations.length} problem${violations.length === 1 ? '' : 's'}: see the fields marked below.`,
    );
    return;
  }
  try {
    const created = await api('POST', '/pilots', { body: record });
    clearErrors();
    form().reset();
    field('p-date').value = new Date().toISOString().slice(0, 10);
    notify(`Pilot #${created.id} recorded (${created.pilot.scope.subject}, ${created.pilot.date}).`);
    listOffset = 0;
    await loadPilots();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    showServerError(error);
  }
}

async function loadSchema() {
  schema = await api('GET', '/pilots/schema');
  const select = $('p-decision');
  const choices = schema.properties?.decision?.enum ?? DECISIONS.map((d) => d.key);
  clear(
    select,
    h('option', { value: '' }, '— choose —'),
    choices.map((/** @type {string} */ value) =>
      h('option', { value }, DECISIONS.find((d) => d.key === value)?.label ?? value),
    ),
  );
}

/* ---------- list and charts ---------- */

/** @param {any} page the answer of GET /pilots */
function renderList(page) {
  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = page.offset + page.pilots.length;
  $('pilots-status').textContent =
    page.total === 0 ? 'No pilots recorded yet' : `Pilots ${first}–${last} of ${page.total}`;
  /** @type {HTMLButtonElement} */ ($('pilots-pager').querySelector('[data-page="prev"]')).disabled = page.offset === 0;
  /** @type {HTMLButtonElement} */ ($('pilots-pager').querySelector('[data-page="next"]')).disabled =
    last >= page.total;
  const rows = page.pilots.map((/** @type {{ id: number, pilot: any }} */ { id, pilot }) => [
    id,
    pilot.date,
    `${pilot.scope.level} · ${pilot.scope.subject} · ${pilot.scope.objective}`,
    h('code', null, pilot.commit),
    DECISIONS.find((d) => d.key === pilot.decision)?.label ?? pilot.decision,
    `${pilot.actual_minutes} / ${pilot.planned_minutes}`,
    EVIDENCE.map((e) => pilot.aggregate_evidence[e.key]).join(' · '),
  ]);
  clear(
    $('pilot-list'),
    page.total === 0
      ? null
      : dataTable({
          columns: [
            '#',
            'Date',
            'Level · subject · objective',
            'Commit',
            'Decision',
            'Minutes (actual / planned)',
            'Evidence (ANO · ED · L · P)',
          ],
          rows,
          label: 'Pilot records',
          className: 'pilot-list',
        }),
  );
}

function drawCharts() {
  if (!summary) return;
  const levels = Object.keys(summary.evidence.by_level).sort((a, b) =>
    a.localeCompare(b, undefined, { numeric: true }),
  );
  stackedBars($('chart-evidence'), {
    title: 'Evidence by school level: students at each level of achievement',
    rows: levels.map((level) => ({ label: level, values: summary.evidence.by_level[level].totals })),
    series: EVIDENCE,
    empty: 'No evidence yet: record a pilot.',
  });
  const byDate = new Map();
  for (const { pilot } of allPilots) {
    const counts = byDate.get(pilot.date) ?? {};
    counts[pilot.decision] = (counts[pilot.decision] ?? 0) + 1;
    byDate.set(pilot.date, counts);
  }
  stackedBars($('chart-decisions'), {
    title: 'Decisions per date: number of pilots by decision',
    rows: [...byDate.keys()].sort().map((date) => ({ label: date, values: byDate.get(date) })),
    series: DECISIONS,
    empty: 'No decisions yet.',
  });
  const m = summary.minutes;
  $('pilot-totals').textContent =
    summary.count === 0
      ? ''
      : `${summary.count} pilot${summary.count === 1 ? '' : 's'} · ${m.actual} of ${m.planned} planned minutes used (${m.overrun >= 0 ? '+' : ''}${m.overrun}).`;
}

async function fetchAllPilots() {
  const pilots = [];
  for (let offset = 0; offset < 20_000; offset += 1000) {
    const page = await api('GET', `/pilots${query({ limit: 1000, offset })}`);
    pilots.push(...page.pilots);
    if (pilots.length >= page.total || page.pilots.length === 0) break;
  }
  return pilots;
}

export async function loadPilots() {
  try {
    const [page, summarized, all] = await Promise.all([
      api('GET', `/pilots${query({ limit: PAGE, offset: listOffset })}`),
      api('GET', '/pilots/summary'),
      fetchAllPilots(),
      schema ? Promise.resolve() : loadSchema(),
    ]);
    summary = summarized;
    allPilots = all;
    renderList(page);
    drawCharts();
  } catch (error) {
    notifyError(error);
  }
}

export function initPilotsView() {
  field('p-date').value = new Date().toISOString().slice(0, 10);
  form().addEventListener('submit', submit);
  $('pilots-pager').addEventListener('click', (event) => {
    const page = /** @type {Element} */ (event.target).closest('button')?.dataset.page;
    if (!page) return;
    listOffset = page === 'next' ? listOffset + PAGE : Math.max(0, listOffset - PAGE);
    loadPilots();
  });
  redrawOnResize($('chart-evidence'), drawCharts);
  redrawOnResize($('chart-decisions'), drawCharts);
}
