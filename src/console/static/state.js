// @ts-check
// The console's shared state: the databases, the current database, the open
// transaction session. Views subscribe to changes; the current database and
// the session survive a reload of the tab (sessionStorage).

import { api, ApiError, codeLabel, messageText } from './api.js';
import { $, h, clear } from './dom.js';

const DB_KEY = 'sqlscribe.db';
const SESSION_KEY = 'sqlscribe.session';

/** @type {Set<(what: 'db' | 'session' | 'dbs') => void>} */
const listeners = new Set();

/**
 * @type {{ mode: 'multi-db' | 'single-db' | undefined, dbs: string[], db: string,
 *   session: { id: string, db: string, expires_unix: number } | null, ending: string | null }}
 */
export const state = {
  /** 'multi-db' or 'single-db' once /dbs answered. */
  mode: undefined,
  dbs: [],
  db: sessionStorage.getItem(DB_KEY) ?? '',
  /** { id, db, expires_unix } while a transaction session is open. */
  session: readSession(),
  /** The id of the session this tab is committing or rolling back, until the server has answered. */
  ending: null,
};

function readSession() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
    return saved && typeof saved.id === 'string' ? saved : null;
  } catch {
    return null;
  }
}

/** @param {(what: 'db' | 'session' | 'dbs') => void} listener */
export function onChange(listener) {
  listeners.add(listener);
}

/** @param {'db' | 'session' | 'dbs'} what */
function changed(what) {
  for (const listener of listeners) listener(what);
}

/** @param {string} db */
export function setDb(db) {
  if (state.db === db) return;
  state.db = db;
  sessionStorage.setItem(DB_KEY, db);
  changed('db');
}

/** @param {{ id: string, db: string, expires_unix: number } | null} session */
export function setSession(session) {
  state.session = session;
  if (session) sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(SESSION_KEY);
  changed('session');
}

// The Data view's "Query in SQL" puts a query in the SQL view's editor: the SQL view says how, so
// that the two views do not import each other (the SQL view already asks the Data view for tables).
/** @type {(sql: string) => void} */
let editorOpener = () => {};

/** @param {(sql: string) => void} open */
export function setEditorOpener(open) {
  editorOpener = open;
}

/** @param {string} sql */
export function openInEditor(sql) {
  editorOpener(sql);
}

export async function loadDatabases() {
  const list = await api('GET', '/dbs');
  state.mode = list.mode;
  state.dbs = list.dbs ?? [];
  if (list.mode === 'single-db') setDb(list.single ?? state.dbs[0] ?? '');
  else if (state.db !== '' && !state.dbs.includes(state.db)) setDb(state.dbs[0] ?? '');
  else if (state.db === '' && state.dbs.length > 0) setDb(state.dbs[0]);
  changed('dbs');
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let noticeTimer;

/**
 * A short message at the top of the page; errors stay until the next message.
 * @param {import('./dom.js').Child} message
 * @param {{ error?: boolean }} [options]
 */
export function notify(message, { error = false } = {}) {
  const notice = $('notice');
  clearTimeout(noticeTimer);
  notice.classList.toggle('is-error', error);
  notice.setAttribute('role', error ? 'alert' : 'status');
  clear(notice, message);
  if (!error) noticeTimer = setTimeout(() => clear(notice), 8000);
}

/**
 * An error of the service as a node: its code in a badge, then its message.
 * @param {unknown} error
 * @returns {HTMLSpanElement}
 */
export function errorNode(error) {
  const code = error instanceof ApiError ? error.code : undefined;
  return h(
    'span',
    null,
    code !== undefined ? h('span', { class: 'code-badge' }, codeLabel(code)) : null,
    messageText(error),
  );
}

/** @param {unknown} error */
export function notifyError(error) {
  notify(errorNode(error), { error: true });
}
