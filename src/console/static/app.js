// @ts-check
// The console's entry point: the views chosen by the URL's hash (#data, #sql,
// #history, #pilots, #teacher, #exercises, #lesson), loaded when shown.

import { $, clear } from './dom.js';
import { initDataView, loadTables } from './data-view.js';
import { initPilotsView, loadPilots } from './pilots-view.js';
import { initSqlView } from './sql-view.js';
import { initHistoryView, loadHistory } from './history-view.js';
import { initTeacherView, loadClass, probeClass } from './teacher-view.js';
import { initExercisesView, loadExercises } from './exercises-view.js';
import { initLessonView, leaveLesson, loadLesson, probeLesson } from './lesson-view.js';
import { promptToken } from './api.js';
import { loadDatabases, notifyError } from './state.js';

const VIEWS = ['data', 'sql', 'history', 'pilots', 'teacher', 'exercises', 'lesson'];

/** @returns {string | undefined} */
function currentView() {
  const name = location.hash.replace(/^#/, '');
  return VIEWS.includes(name) ? name : undefined;
}

/** @param {string | undefined} name */
async function show(name) {
  clear($('notice'));
  for (const view of VIEWS) $(`view-${view}`).hidden = view !== name;
  for (const link of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-nav]'))) {
    if (link.dataset.nav === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${/** @type {Record<string, string>} */ ({ data: 'Data', sql: 'SQL', history: 'History', pilots: 'Pilots', teacher: 'Class', exercises: 'Exercises', lesson: 'Lesson' })[String(name)]} · sqlscribe console`;
  if (name !== 'lesson') leaveLesson();
  try {
    if (name === 'data') {
      await loadDatabases();
      await loadTables();
    } else if (name === 'pilots') {
      await loadPilots();
    } else if (name === 'history') {
      await loadDatabases();
      await loadHistory();
    } else if (name === 'teacher') {
      await loadClass();
    } else if (name === 'exercises') {
      await loadExercises();
    } else if (name === 'lesson') {
      await loadLesson();
    } else {
      await loadDatabases();
    }
  } catch (error) {
    notifyError(error);
  }
}

/**
 * Whether to offer the Class and Lesson tabs (a teacher's): asked once the first view has loaded (and any token prompt is answered), and after a new token.
 * @param {string | undefined} name
 */
function showThenProbe(name) {
  return show(name).then(() => Promise.all([probeClass(), probeLesson()]));
}

/** After Cancel on the token prompt, the header's "Enter token" asks again, then reloads the view. */
function initTokenControl() {
  $('token-open').addEventListener('click', async () => {
    if (await promptToken()) showThenProbe(currentView() ?? 'data');
  });
}

function start() {
  initDataView();
  initSqlView();
  initHistoryView();
  initPilotsView();
  initTeacherView();
  initExercisesView();
  initLessonView();
  initTokenControl();
  // Other hashes (the skip link's #main) leave the view as it is.
  window.addEventListener('hashchange', () => {
    const name = currentView();
    if (name) show(name);
  });
  showThenProbe(currentView() ?? 'data');
  document.body.dataset.ready = 'true';
}

start();
