// @ts-check
// The Lesson view, a teacher's (admin token): write an exercise (every field
// of POST/PUT /exercises), try its solution on the template before saving
// (inside a transaction that is always rolled back, so the template never
// changes), save, delete; and the class's progress: a grid of students ×
// exercises (solved, tried, stuck, each in words and a symbol as well as a
// colour), refreshed as attempts arrive on the journal's live feed
// (progress-feed.js), the gradebook as CSV, and the students per evidence
// level for the pilot record.

import { api, ApiError, codeLabel, messageText, query, storedToken } from './api.js';
import { $, clear, dataTable, field, h, input } from './dom.js';
import { markdownNodes } from './markdown.js';
import { notify, notifyError } from './state.js';
import { byName } from './class-students.js';
import { followAttempts } from './progress-feed.js';

const SET_KEY = 'sqlscribe.lesson-set';
const LEVELS = [
  ['aun_no_observable', 'Aún no observable', 'p-ev-ano'],
  ['en_desarrollo', 'En desarrollo', 'p-ev-ed'],
  ['logrado', 'Logrado', 'p-ev-lo'],
  ['profundizado', 'Profundizado', 'p-ev-pr'],
];

/** @type {string | null} the id of the exercise in the form, null for a new one */
let editing = null;
let lessonSet = '';
/** @type {(() => void) | null} */
let stopFeed = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let refreshTimer;
/** @type {any} the answer of GET /exercises/evidence */
let evidence = null;

/* ---------- the exercise form ---------- */

/** @param {unknown} error the refusal to show, or null to clear the box */
function formError(error) {
  const box = $('exercise-form-error');
  if (error === null) {
    clear(box);
    return;
  }
  clear(
    box,
    h(
      'p',
      null,
      error instanceof ApiError ? h('span', { class: 'code-badge' }, codeLabel(error.code)) : null,
      messageText(error),
    ),
  );
  box.focus();
}

function definition() {
  const tolerance = field('ex-tolerance').value.trim();
  const position = field('ex-position').value.trim();
  const check = field('ex-check').value.trim();
  return {
    id: field('ex-id').value.trim(),
    set: field('ex-set').value.trim(),
    ...(position === '' ? {} : { position: Number(position) }),
    title: field('ex-title').value,
    prompt: field('ex-prompt').value,
    template: field('ex-template').value,
    solution: field('ex-solution').value,
    order: field('ex-order').value,
    columns: field('ex-columns').value,
    ...(tolerance === '' ? {} : { tolerance: Number(tolerance) }),
    check: check === '' ? null : check,
    showRows: input('ex-show-rows').checked,
  };
}

/** @param {any} exercise an exercise as GET /exercises/{id} answers a teacher, or null for a new one */
function fill(exercise) {
  editing = exercise?.id ?? null;
  field('ex-id').value = exercise?.id ?? '';
  input('ex-id').readOnly = editing !== null;
  field('ex-set').value = exercise?.set ?? lessonSet;
  field('ex-position').value = exercise?.position ?? '';
  field('ex-title').value = exercise?.title ?? '';
  field('ex-prompt').value = exercise?.prompt ?? '';
  if (exercise) ensureTemplateOption(exercise.template);
  field('ex-template').value = exercise?.template ?? field('ex-template').value;
  field('ex-solution').value = exercise?.solution ?? '';
  field('ex-check').value = exercise?.check ?? '';
  field('ex-order').value = exercise?.order ?? 'any';
  field('ex-columns').value = exercise?.columns ?? 'position';
  field('ex-tolerance').value = exercise?.tolerance ?? '';
  input('ex-show-rows').checked = exercise?.showRows ?? false;
  $('exercise-form-h').textContent = editing === null ? 'Write an exercise' : `Edit ${editing}`;
  $('ex-delete').hidden = editing === null;
  clear($('ex-try-result'));
  formError(null);
}

/** @param {string} name */
function ensureTemplateOption(name) {
  const select = /** @type {HTMLSelectElement} */ ($('ex-template'));
  if (![...select.options].some((option) => option.value === name)) select.append(h('option', { value: name }, name));
}

async function loadTemplates() {
  const list = await api('GET', '/dbs');
  const chosen = field('ex-template').value;
  clear(
    $('ex-template'),
    (list.dbs ?? []).map((/** @type {string} */ db) => h('option', { value: db }, db)),
  );
  if (chosen !== '') ensureTemplateOption(chosen);
  if (chosen !== '') field('ex-template').value = chosen;
}

/** @param {any} result the solution's result */
function resultOf(result) {
  if (!result) return h('p', { class: 'muted' }, 'The solution returned nothing.');
  if (result.columns.length === 0) return h('p', { class: 'ok-message' }, result.message ?? 'Done.');
  return [
    dataTable({ columns: result.columns, rows: result.rows, label: "The solution's result" }),
    h(
      'p',
      { class: 'muted' },
      `${result.rows.length} row${result.rows.length === 1 ? '' : 's'}${result.truncated ? " (cut at the server's limit)" : ''}`,
    ),
  ];
}

/**
 * Runs the solution (then the check, for a task that changes data) on the
 * template inside a transaction session that is rolled back whatever happens:
 * the teacher sees what students will be compared with, and nothing changes.
 */
async function trySolution() {
  const { template, solution, check } = definition();
  const out = $('ex-try-result');
  if (solution.trim() === '' || template === '') {
    clear(out, h('p', { class: 'muted' }, 'Choose a template and write the solution first.'));
    return;
  }
  field('ex-try').disabled = true;
  let session;
  try {
    session = (await api('POST', '/tx/begin', { body: { db: template } })).session;
    let results = (await api('POST', '/exec', { body: { sql: solution }, session })).results;
    if (check !== null) results = (await api('POST', '/exec', { body: { sql: check }, session })).results;
    clear(
      out,
      h('h3', null, check === null ? "The solution's result" : "The check's result after the solution"),
      resultOf(results.at(-1)),
      h('p', { class: 'muted' }, `Run on ${template} inside a transaction, then rolled back: nothing changed.`),
    );
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    clear(
      out,
      h(
        'div',
        { class: 'error-box', id: 'ex-try-error' },
        h(
          'p',
          null,
          h('span', { class: 'code-badge' }, codeLabel(error.code) || `HTTP ${error.status}`),
          messageText(error),
        ),
        typeof error.body.statement === 'number'
          ? h('p', null, `Failed at statement ${error.body.statement + 1}.`)
          : null,
      ),
    );
  } finally {
    if (session) await api('POST', `/tx/rollback${query({ session })}`).catch(() => {});
    field('ex-try').disabled = false;
  }
}

/** @param {Event} event */
async function save(event) {
  event.preventDefault();
  const body = definition();
  try {
    const saved =
      editing === null
        ? (await api('POST', '/exercises', { body })).exercise
        : (await api('PUT', `/exercises/${encodeURIComponent(editing)}`, { body })).exercise;
    notify(`Saved ${saved.id} in ${saved.set}.`);
    lessonSet = saved.set;
    sessionStorage.setItem(SET_KEY, lessonSet);
    fill(saved);
    await loadLesson();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    formError(error);
  }
}

/** @param {string} id */
async function remove(id) {
  if (!window.confirm(`Delete the exercise ${id}? Its attempts stay in the journal.`)) return;
  try {
    await api('DELETE', `/exercises/${encodeURIComponent(id)}`);
    notify(`Deleted ${id}.`);
    if (editing === id) fill(null);
    await loadLesson();
  } catch (error) {
    notifyError(error);
  }
}

/** @param {any[]} exercises */
function renderExercises(exercises) {
  clear(
    $('lesson-exercises'),
    exercises.length === 0
      ? h('li', { class: 'muted' }, 'No exercises in this lesson yet.')
      : exercises.map((exercise) =>
          h(
            'li',
            { dataset: { id: exercise.id } },
            h(
              'span',
              { class: 'lesson-item' },
              `${exercise.position}. `,
              h('strong', null, exercise.title),
              ' ',
              h('code', { class: 'muted' }, exercise.id),
            ),
            h(
              'span',
              { class: 'row' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'edit',
                  onclick: () => {
                    fill(exercise);
                    $('ex-title').focus();
                  },
                },
                'Edit',
                h('span', { class: 'visually-hidden' }, ` ${exercise.id}`),
              ),
              h(
                'button',
                { type: 'button', class: 'delete', onclick: () => remove(exercise.id) },
                'Delete',
                h('span', { class: 'visually-hidden' }, ` ${exercise.id}`),
              ),
            ),
          ),
        ),
  );
}

/* ---------- progress ---------- */

/** @type {Record<string, [string, string]>} */
const STATE_WORDS = {
  solved: ['✓', 'solved'],
  stuck: ['⚠', 'stuck'],
  tried: ['✗', 'tried'],
  'not-tried': ['·', 'not tried'],
};

/**
 * @param {any} cell a student's state on one exercise
 * @param {{ title: string }} exercise
 * @param {string} student
 */
function cellNode(cell, exercise, student) {
  const [symbol, word] = STATE_WORDS[cell.state] ?? ['?', cell.state];
  const tries = cell.attempts > 0 ? ` ${cell.attempts}×` : '';
  const details = [
    `${student}, ${exercise.title}: ${word}`,
    cell.attempts > 0 ? `${cell.attempts} attempt${cell.attempts === 1 ? '' : 's'}` : null,
    cell.lastErrorClass !== null ? `last error class ${cell.lastErrorClass}` : null,
  ]
    .filter(Boolean)
    .join(', ');
  return h(
    'td',
    {
      class: 'progress-cell',
      dataset: { state: cell.state, exercise: cell.exercise, attempts: cell.attempts },
      title: details,
    },
    h('span', { 'aria-hidden': 'true', class: 'cell-symbol' }, symbol),
    ' ',
    word,
    tries,
  );
}

/** @param {any} report the answer of GET /exercises/progress */
function renderProgress(report) {
  /** @type {any[]} */
  const students = [...report.students].sort((a, b) => byName(a.token, b.token));
  const stuck = students.filter((student) => student.stuck > 0).length;
  $('progress-summary').textContent =
    `${students.length} student${students.length === 1 ? '' : 's'}, ${report.exercises.length} exercise${report.exercises.length === 1 ? '' : 's'}; ${stuck} stuck (${report.stuck.attempts} or more wrong answers in ${report.stuck.minutes} minutes). As of ${new Date(report.at).toLocaleTimeString()}.`;
  if (students.length === 0 || report.exercises.length === 0) {
    clear(
      $('progress-grid'),
      h(
        'p',
        { class: 'muted' },
        report.exercises.length === 0
          ? 'No exercises in this lesson yet.'
          : 'No students yet: make their tokens (POST /tokens).',
      ),
    );
    return;
  }
  const byId = new Map(report.exercises.map((/** @type {any} */ exercise) => [exercise.id, exercise]));
  clear(
    $('progress-grid'),
    h(
      'div',
      { class: 'table-wrap', role: 'region', 'aria-label': 'Progress, students by exercises', tabindex: '0' },
      h(
        'table',
        { class: 'progress-table' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, 'Student'),
            h('th', { scope: 'col' }, 'Solved'),
            report.exercises.map((/** @type {any} */ exercise) =>
              h('th', { scope: 'col', dataset: { exercise: exercise.id } }, `${exercise.position}. ${exercise.title}`),
            ),
          ),
        ),
        h(
          'tbody',
          null,
          students.map((student) =>
            h(
              'tr',
              { dataset: { token: student.token } },
              h('th', { scope: 'row' }, student.token),
              h('td', { class: 'num' }, `${student.solved} / ${report.exercises.length}`),
              student.exercises.map((/** @type {any} */ cell) =>
                cellNode(cell, byId.get(cell.exercise) ?? { title: cell.exercise }, student.token),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

async function loadProgress() {
  if (lessonSet === '') {
    clear($('progress-grid'));
    $('progress-summary').textContent = '';
    return;
  }
  renderProgress(await api('GET', `/exercises/progress${query({ set: lessonSet })}`));
}

/** Many attempts at once (thirty students pressing Check) make one request for the grid. */
function scheduleProgress() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => loadProgress().catch(notifyError), 250);
}

/** @param {'live' | 'down'} state */
function feedState(state) {
  const live = $('progress-live');
  live.dataset.state = state;
  live.textContent =
    state === 'live'
      ? '● Live: the grid updates as answers arrive.'
      : '○ Not live: the journal feed is not reachable; Refresh updates the grid.';
  if (state === 'live') scheduleProgress();
}

function csvLink() {
  const link = /** @type {HTMLAnchorElement} */ ($('progress-csv'));
  link.href = `/exercises/progress${query({ set: lessonSet, format: 'csv' })}`;
  link.setAttribute('download', `progress${lessonSet === '' ? '' : `-${lessonSet}`}.csv`);
  link.hidden = lessonSet === '';
}

/**
 * The link needs the token, which a plain link cannot send: fetched, then handed to the browser as a file.
 * @param {MouseEvent} event
 */
async function downloadCsv(event) {
  const token = storedToken();
  if (token === null) return;
  event.preventDefault();
  const link = /** @type {HTMLAnchorElement} */ (event.currentTarget);
  try {
    const response = await fetch(link.href, {
      headers: { 'X-Service-Token': token, Accept: 'text/csv' },
      cache: 'no-store',
    });
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    const url = URL.createObjectURL(await response.blob());
    const save = h('a', { href: url, download: link.getAttribute('download'), hidden: true });
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (error) {
    notifyError(error);
  }
}

/* ---------- evidence ---------- */

/** @param {Event} [event] */
async function loadEvidence(event) {
  event?.preventDefault();
  if (lessonSet === '') return;
  const thresholds = Object.fromEntries(
    ['en_desarrollo', 'logrado', 'profundizado'].map((name) => [name, field(`ev-${name}`).value.trim()]),
  );
  try {
    evidence = await api('GET', `/exercises/evidence${query({ set: lessonSet, ...thresholds })}`);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    evidence = null;
    clear(
      $('evidence-counts'),
      h(
        'div',
        { class: 'error-box' },
        h('p', null, h('span', { class: 'code-badge' }, codeLabel(error.code)), messageText(error)),
      ),
    );
    return;
  }
  const t = evidence.thresholds;
  clear(
    $('evidence-counts'),
    h(
      'p',
      { class: 'muted' },
      `${evidence.students} students, ${evidence.exercises} exercises. Solved at least ${t.en_desarrollo}: en desarrollo; ${t.logrado}: logrado; ${t.profundizado}: profundizado.`,
    ),
    dataTable({
      columns: ['Level', 'Students'],
      rows: LEVELS.map(([key, label]) => [label, evidence.aggregate_evidence[key]]),
      label: 'Students per evidence level',
    }),
    h(
      'button',
      { type: 'button', id: 'evidence-to-pilot', onclick: toPilotForm },
      'Put these counts in the pilot form',
    ),
  );
}

/** The counts go to the Pilots view's evidence fields; the teacher completes and records the pilot there. */
function toPilotForm() {
  if (evidence === null) return;
  for (const [key, , id] of LEVELS) field(id).value = String(evidence.aggregate_evidence[key]);
  location.hash = '#pilots';
}

/* ---------- the view ---------- */

export async function loadLesson() {
  const all = (await api('GET', '/exercises')).exercises ?? [];
  /** @type {string[]} */
  const sets = [...new Set(all.map((/** @type {any} */ exercise) => exercise.set))].sort();
  lessonSet = sessionStorage.getItem(SET_KEY) ?? lessonSet;
  if (!sets.includes(lessonSet)) lessonSet = sets[0] ?? '';
  clear(
    $('lesson-set'),
    sets.length === 0
      ? h('option', { value: '' }, '(no lessons yet)')
      : sets.map((set) => h('option', { value: set, selected: set === lessonSet ? true : undefined }, set)),
  );
  renderExercises(all.filter((/** @type {any} */ exercise) => exercise.set === lessonSet));
  if (editing === null && field('ex-set').value === '') field('ex-set').value = lessonSet;
  csvLink();
  await Promise.all([loadTemplates(), loadProgress(), loadEvidence()]);
  stopFeed ??= followAttempts(scheduleProgress, feedState);
}

/**
 * Shows the Lesson tab when this token may read the class's progress (an
 * admin token, or a server without tokens); asked without the token prompt.
 */
export async function probeLesson() {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  const token = storedToken();
  if (token !== null) headers['X-Service-Token'] = token;
  let allowed = false;
  try {
    allowed = (await fetch('/exercises/progress', { headers, cache: 'no-store' })).ok;
  } catch {
    allowed = false;
  }
  $('nav-lesson').hidden = !allowed;
  return allowed;
}

/** Leaving the view closes the feed: the server serves only a few followers. */
export function leaveLesson() {
  stopFeed?.();
  stopFeed = null;
  clearTimeout(refreshTimer);
}

export function initLessonView() {
  $('exercise-form').addEventListener('submit', (event) => save(event).catch(notifyError));
  $('ex-try').addEventListener('click', () => trySolution().catch(notifyError));
  $('ex-new').addEventListener('click', () => fill(null));
  $('ex-delete').addEventListener('click', () => editing !== null && remove(editing));
  $('ex-preview-button').addEventListener('click', () =>
    clear($('ex-preview'), markdownNodes(field('ex-prompt').value)),
  );
  $('lesson-set').addEventListener('change', (event) => {
    lessonSet = /** @type {HTMLSelectElement} */ (event.currentTarget).value;
    sessionStorage.setItem(SET_KEY, lessonSet);
    loadLesson().catch(notifyError);
  });
  $('progress-refresh').addEventListener('click', () => loadProgress().catch(notifyError));
  $('progress-csv').addEventListener('click', downloadCsv);
  $('evidence-form').addEventListener('submit', (event) => loadEvidence(event).catch(notifyError));
}
