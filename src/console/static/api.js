// @ts-check
// Talking to the service: JSON in and out, the token asked once per browser
// tab (kept in sessionStorage), the transaction session header, and the
// server's clock (from the Date header) for the session countdown.

const TOKEN_KEY = 'sqlscribe.token';

/** An error answered by the service: its HTTP status and JSON body ({ ok: false, error, code, … }). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {any} body
   */
  constructor(status, body) {
    super(typeof body?.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body ?? {};
    this.code = typeof body?.code === 'number' ? body.code : undefined;
  }
}

/**
 * `[SQ1234]` of an error code, or '' without one.
 * @param {unknown} code
 * @returns {string}
 */
export function codeLabel(code) {
  return typeof code === 'number' ? `[SQ${String(code).padStart(4, '0')}]` : '';
}

/**
 * The message of an error body without its leading `[SQnnnn]`.
 * @param {any} error an Error, an error body or a string
 * @returns {string}
 */
export function messageText(error) {
  return String(error?.message ?? error).replace(/^\[SQ\d{4}\]\s*/, '');
}

let serverOffsetMs = 0;

/** Now on the server's clock, in Unix seconds (the Date header has a 1 s resolution). */
export function serverNowUnix() {
  return (Date.now() + serverOffsetMs) / 1000;
}

/** @param {Response} response */
function noteServerClock(response) {
  const date = Date.parse(response.headers.get('Date') ?? '');
  if (Number.isFinite(date)) serverOffsetMs = date + 500 - Date.now();
}

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @type {Promise<boolean> | null} */
let pendingAsk = null;

/**
 * Asks for the token with the dialog and stores it. Requests that failed
 * together share one question; a request that was answered 401 with a token
 * that has been replaced since simply retries.
 * @param {string | null} sentToken
 * @returns {Promise<boolean>}
 */
function askToken(sentToken) {
  if (pendingAsk) return pendingAsk;
  if (storedToken() !== sentToken) return Promise.resolve(true);
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('token-dialog'));
  const input = /** @type {HTMLInputElement} */ (document.getElementById('token-input'));
  const message = /** @type {HTMLElement} */ (document.getElementById('token-message'));
  message.textContent =
    sentToken === null
      ? 'This server asks for a token. It is kept only for this browser tab.'
      : 'The server refused that token. Enter it again.';
  dialog.dataset.asked = String(Number(dialog.dataset.asked ?? '0') + 1);
  input.value = '';
  pendingAsk = new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const token = input.value.trim();
        pendingAsk = null;
        if (dialog.returnValue === 'ok' && token !== '') {
          sessionStorage.setItem(TOKEN_KEY, token);
          resolve(true);
        } else {
          resolve(false);
        }
        // Without a token the console can still offer to ask again: the header's "Enter token".
        /** @type {HTMLElement} */ (document.getElementById('token-open')).hidden = storedToken() !== null;
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    input.focus();
  });
  return pendingAsk;
}

/** Asks for a token now (the header's "Enter token"); resolves true when one was entered. */
export function promptToken() {
  return askToken(storedToken());
}

/**
 * @param {Response} response
 * @returns {Promise<any>}
 */
async function readBody(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { ok: false, error: text || `HTTP ${response.status}` };
  }
}

/**
 * One request to the service. Resolves with the JSON body; rejects with an
 * ApiError for any non-2xx answer. `session` adds X-Service-Session.
 * @param {string} method
 * @param {string} path
 * @param {{ body?: unknown, session?: string }} [options]
 * @returns {Promise<any>} the service's JSON, whose shape each caller knows from docs/api.md
 */
export async function api(method, path, { body, session } = {}) {
  for (let attempt = 0; ; attempt++) {
    const token = storedToken();
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    if (token !== null) headers['X-Service-Token'] = token;
    if (session) headers['X-Service-Session'] = session;
    /** @type {RequestInit} */
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      throw new ApiError(0, {
        ok: false,
        error: `the service cannot be reached (${/** @type {Error} */ (error).message})`,
      });
    }
    noteServerClock(response);
    const data = await readBody(response);
    if (response.status === 401 && attempt < 5 && (await askToken(token))) continue;
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }
}

/**
 * A query string from an object, leaving out undefined and empty values.
 * @param {Record<string, unknown>} params
 * @returns {string}
 */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
