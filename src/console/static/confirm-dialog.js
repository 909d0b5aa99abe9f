// @ts-check
// The console's own yes-or-no question: a modal <dialog> (focus kept inside,
// Esc cancels, its title and text read out by screen readers), used instead of
// window.confirm so the question can hold a list, a count and code, and so
// the browser tests can read it like any other part of the page.

import { $, clear } from './dom.js';

/** @type {Promise<boolean> | null} */
let pending = null;

/**
 * Asks `title` with `body` (nodes or text) and resolves true only on the
 * confirm button; Cancel, Esc and a second question while one is open are false.
 * Cancel has the focus first: Enter alone never confirms a destructive action.
 * @param {{ title: string, body: import('./dom.js').Child, confirm: string }} question
 * @returns {Promise<boolean>}
 */
export function askConfirm({ title, body, confirm }) {
  if (pending) return Promise.resolve(false);
  const dialog = /** @type {HTMLDialogElement} */ ($('confirm-dialog'));
  clear($('confirm-h'), title);
  clear($('confirm-body'), body);
  $('confirm-ok').textContent = confirm;
  dialog.returnValue = '';
  pending = new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        pending = null;
        resolve(dialog.returnValue === 'ok');
      },
      { once: true },
    );
  });
  dialog.showModal();
  $('confirm-cancel').focus();
  return pending;
}
