// The console's entry point: the views chosen by the URL's hash (#data, #sql,
// #history, #pilots, #teacher), loaded when shown.

import { $, clear } from './dom.js';
import { initDataView, loadTables } from './data-view.js';
import { initPilotsView, loadPilots } from './pilots-view.js';
import { initSqlView } from './sql-view.js';
import { initHistoryView, loadHistory } from './history-view.js';
import { initTeacherView, loadClass, probeClass } from './teacher-view.js';
import { promptToken } from './api.js';
import { loadDatabases, notifyError } from './state.js';

const VIEWS = ['data', 'sql', 'history', 'pilots', 'teacher'];

function currentView() {
  const name = location.hash.replace(/^#/, '');
  return VIEWS.includes(name) ? name : undefined;
}

async function show(name) {
  clear($('notice'));
  for (const view of VIEWS) $(`view-${view}`).hidden = view !== name;
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${{ data: 'Data', sql: 'SQL', history: 'History', pilots: 'Pilots', teacher: 'Class' }[name]} · sqlscribe console`;
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
    } else {
      await loadDatabases();
    }
  } catch (error) {
    notifyError(error);
  }
}

/** Whether to offer the Class tab: asked once the first view has loaded (and any token prompt is answered), and after a new token. */
function showThenProbe(name) {
  return show(name).then(probeClass);
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
