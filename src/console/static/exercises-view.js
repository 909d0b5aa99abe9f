// @ts-check
// The Exercises view, a student's: the tasks of a lesson (a set) in order,
// the chosen task's prompt (Markdown, drawn safely by markdown.js), an editor
// that completes the tables of the exercise's template, a Check button
// (POST /exercises/{id}/check, run on a scratch copy: nothing changes), the
// feedback (exercise-feedback.js) and a mark on the tasks solved. The marks
// are the server's (GET /exercises/mine), asked when a lesson is shown and
// after each check, so that another tab or another computer with the same
// token shows the same ones. Only the drafts of SQL stay in this tab.

import { api, ApiError, query } from './api.js';
import { $, clear, field, h } from './dom.js';
import { markdownNodes } from './markdown.js';
import { showFeedback } from './exercise-feedback.js';
import { statementSpans } from './statement-spans.js';
import { createSqlEditor } from './editor.js';
import { notifyError } from './state.js';

const SET_KEY = 'sqlscribe.exercise-set';
const DRAFT_KEY = 'sqlscribe.exercise-drafts';

/**
 * A task as GET /exercises lists it for a student (no solution).
 * @typedef {{ id: string, set: string, title: string, [field: string]: any }} Exercise
 */

/** @type {Exercise[]} */
let exercises = [];
/** Ids of the shown lesson's tasks the server counts as solved for this token. */
/** @type {Set<string>} */
let solved = new Set();
/** The lesson shown: an answer about progress that comes back for another one is dropped. */
let shownSet = '';
/** @type {Exercise | null} */
let current = null;
let checking = false;
/** @type {ReturnType<typeof import('./editor.js').createSqlEditor>} */
let editor;

/**
 * @param {string} key
 * @param {any} fallback
 * @returns {any}
 */
function readJson(key, fallback) {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? 'null') ?? fallback;
  } catch {
    return fallback;
  }
}

/**
 * This token's solved tasks of `set`, as the server keeps them (every check is journaled).
 * @param {string} set
 */
async function loadSolved(set) {
  if (set === '') {
    solved = new Set();
    return;
  }
  const own = await api('GET', `/exercises/mine${query({ set })}`);
  if (set !== shownSet) return;
  solved = new Set(
    (own.exercises ?? [])
      .filter((/** @type {any} */ cell) => cell.solved)
      .map((/** @type {any} */ cell) => cell.exercise),
  );
}

/**
 * @param {string} id
 * @param {string} text
 */
function saveDraft(id, text) {
  const drafts = readJson(DRAFT_KEY, {});
  drafts[id] = text;
  sessionStorage.setItem(DRAFT_KEY, JSON.stringify(drafts));
}

function renderTasks() {
  const done = exercises.filter((exercise) => solved.has(exercise.id)).length;
  $('exercise-summary').textContent = exercises.length === 0 ? '' : `${done} of ${exercises.length} solved.`;
  clear(
    $('exercise-list'),
    exercises.length === 0
      ? h('li', { class: 'muted' }, 'No exercises in this lesson yet.')
      : exercises.map((exercise, i) =>
          h(
            'li',
            { dataset: { id: exercise.id, solved: solved.has(exercise.id) ? 'true' : 'false' } },
            h(
              'button',
              {
                type: 'button',
                class: 'task',
                'aria-current': current?.id === exercise.id ? 'true' : undefined,
                onclick: () => choose(exercise.id),
              },
              h('span', { class: 'task-mark', 'aria-hidden': 'true' }, solved.has(exercise.id) ? '✓' : `${i + 1}.`),
              h('span', { class: 'task-title' }, exercise.title),
              solved.has(exercise.id)
                ? h('span', { class: 'task-solved' }, ' solved')
                : h('span', { class: 'visually-hidden' }, ` task ${i + 1}, not solved yet`),
            ),
          ),
        ),
  );
}

/**
 * The template's tables, for the editor's completion (the student may not read the template itself).
 * @param {Exercise} exercise
 */
async function loadCompletions(exercise) {
  editor.setSchema({});
  try {
    const { tables } = await api('GET', `/exercises/${encodeURIComponent(exercise.id)}/tables`);
    if (current?.id !== exercise.id) return;
    editor.setSchema(
      Object.fromEntries(
        tables.map((/** @type {any} */ table) => [
          table.name,
          table.columns.map((/** @type {any} */ column) => column.name),
        ]),
      ),
    );
    $('exercise-tables').textContent = `Tables: ${tables.map((/** @type {any} */ table) => table.name).join(', ')}`;
  } catch {
    $('exercise-tables').textContent = '';
  }
}

/** @param {string} id */
function choose(id) {
  current = exercises.find((exercise) => exercise.id === id) ?? null;
  renderTasks();
  const panel = $('exercise-task');
  panel.hidden = current === null;
  if (current === null) return;
  $('exercise-title').textContent = current.title;
  clear($('exercise-prompt'), markdownNodes(current.prompt));
  const notes = [];
  if (current.order === 'exact') notes.push('The order of the rows matters.');
  if (current.columns === 'name') notes.push('Columns are matched by their names.');
  $('exercise-rules').textContent = notes.join(' ');
  $('exercise-tables').textContent = '';
  editor.setText(readJson(DRAFT_KEY, {})[current.id] ?? '');
  editor.markRange();
  clear($('exercise-feedback'), h('p', { class: 'muted' }, 'Write your answer, then Check.'));
  loadCompletions(current);
}

async function check() {
  if (checking || current === null) return;
  const sql = editor.getText();
  const { statements } = statementSpans(sql);
  editor.markRange();
  if (statements.length === 0) {
    clear($('exercise-feedback'), h('p', { class: 'muted' }, 'Write a statement first.'));
    return;
  }
  checking = true;
  field('exercise-check').disabled = true;
  const exercise = current;
  try {
    const answer = await api('POST', `/exercises/${encodeURIComponent(exercise.id)}/check`, { body: { sql } });
    // The check is recorded before it answers: the server's marks now count it.
    // Should asking fail, the feedback stays and the marks wait for the next check.
    const marks = loadSolved(shownSet).catch(notifyError);
    if (current?.id === exercise.id) {
      const failed = typeof answer.error?.statement === 'number' ? statements[answer.error.statement] : undefined;
      if (failed) editor.markRange(failed.start, failed.end);
      showFeedback(answer, statements);
    }
    await marks;
    renderTasks();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    showFeedback({ correct: false, error: { code: error.code, message: error.message } }, statements);
  } finally {
    checking = false;
    field('exercise-check').disabled = false;
  }
}

/**
 * @param {string[]} sets
 * @param {string} chosen
 */
function setOptions(sets, chosen) {
  clear(
    $('exercise-set'),
    sets.length === 0
      ? h('option', { value: '' }, '(no lessons yet)')
      : sets.map((set) => h('option', { value: set, selected: set === chosen ? true : undefined }, set)),
  );
}

/** The lessons (sets) there are, then the chosen one's tasks in order. */
export async function loadExercises() {
  const all = (await api('GET', '/exercises')).exercises ?? [];
  const sets = [...new Set(all.map((/** @type {Exercise} */ exercise) => exercise.set))].sort();
  let set = sessionStorage.getItem(SET_KEY) ?? '';
  if (!sets.includes(set)) set = sets[0] ?? '';
  setOptions(sets, set);
  shownSet = set;
  exercises = set === '' ? [] : ((await api('GET', `/exercises${query({ set })}`)).exercises ?? []);
  await loadSolved(set);
  const keep =
    current !== null && exercises.some((exercise) => exercise.id === current?.id) ? current.id : exercises[0]?.id;
  if (keep === undefined) {
    current = null;
    $('exercise-task').hidden = true;
    renderTasks();
  } else {
    choose(keep);
  }
}

export function initExercisesView() {
  const parent = $('exercise-editor');
  editor = createSqlEditor({
    parent,
    nonce: document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content') ?? '',
    contentAttributes: {
      id: 'exercise-input',
      'aria-labelledby': 'exercise-answer-h',
      'aria-describedby': 'exercise-hint exercise-tables',
      spellcheck: 'false',
      autocapitalize: 'off',
      autocorrect: 'off',
    },
    onRun: () => check(),
    onChange: (text) => {
      if (current !== null) saveDraft(current.id, text);
    },
  });
  // The browser tests set the text through this handle, as for the SQL view's editor.
  /** @type {HTMLElement & { sqlEditor?: unknown }} */ (parent).sqlEditor = editor;
  $('exercise-check').addEventListener('click', () => check().catch(notifyError));
  $('exercise-set').addEventListener('change', (event) => {
    sessionStorage.setItem(SET_KEY, /** @type {HTMLSelectElement} */ (event.currentTarget).value);
    current = null;
    loadExercises().catch(notifyError);
  });
}
