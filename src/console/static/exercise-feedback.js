// @ts-check
// What a check answered, in words a learner can read: correct or not, the
// columns missing or not asked for, how many rows were expected and came
// back, the first missing and the first extra row (when the exercise shows
// rows), "the order matters here", and an engine error shown as the SQL view
// shows one (its code, its message, the statement that failed). Each verdict
// carries a word and a symbol, never a colour alone.

import { codeLabel } from './api.js';
import { $, dataTable, h } from './dom.js';

/**
 * @param {{ expected: number, got: number }} rows
 * @returns {string}
 */
function rowsText({ expected, got }) {
  const plural = (/** @type {number} */ n) => `${n} row${n === 1 ? '' : 's'}`;
  return expected === got
    ? `${plural(got)}, as expected.`
    : `Expected ${plural(expected)}; your answer gave ${plural(got)}.`;
}

/**
 * @param {string} caption
 * @param {unknown[]} row
 * @param {string} id
 */
function rowTable(caption, row, id) {
  return h(
    'div',
    { class: 'feedback-row', id },
    h('p', null, h('strong', null, caption)),
    dataTable({ columns: row.map((_, i) => `Column ${i + 1}`), rows: [row], label: caption }),
  );
}

/**
 * An engine error, as the SQL view's error box shows it.
 * @param {any} error the check's engine error
 * @param {Array<{ text: string }>} statements
 */
function errorBox(error, statements) {
  const index = typeof error.statement === 'number' ? error.statement : undefined;
  return h(
    'div',
    { class: 'error-box', id: 'exercise-error', dataset: { code: error.code ?? '' } },
    h(
      'p',
      null,
      h('span', { class: 'code-badge' }, codeLabel(error.code)),
      String(error.message ?? '').replace(/^\[SQ\d{4}\]\s*/, ''),
    ),
    index !== undefined
      ? h(
          'p',
          null,
          `Failed at statement ${index + 1}`,
          statements[index] ? ': ' : '.',
          statements[index] ? h('code', null, statements[index].text) : null,
        )
      : null,
    h('p', { class: 'muted' }, 'Nothing was changed: answers run on a scratch copy.'),
  );
}

/**
 * The feedback of one check (`answer` is the body of POST /exercises/{id}/check).
 * @param {any} answer
 * @param {Array<{ text: string }>} [statements]
 * @returns {HTMLDivElement}
 */
export function feedbackNode(answer, statements = []) {
  const feedback = answer.feedback ?? { rows: { expected: 0, got: 0 } };
  if (answer.correct) {
    return h(
      'div',
      { class: 'verdict is-correct', id: 'exercise-verdict', dataset: { correct: 'true' } },
      h('p', { class: 'verdict-word' }, '✓ Correct'),
      h('p', null, rowsText(feedback.rows)),
    );
  }
  const parts = [h('p', { class: 'verdict-word' }, '✗ Not yet')];
  if (answer.error) {
    parts.push(errorBox(answer.error, statements));
  } else {
    if (feedback.columns) {
      const { missing, extra } = /** @type {{ missing: string[], extra: string[] }} */ (feedback.columns);
      if (missing.length > 0)
        parts.push(
          h(
            'p',
            { class: 'feedback-columns' },
            `Column${missing.length === 1 ? '' : 's'} missing: `,
            missing.map((name, i) => [i > 0 ? ', ' : '', h('code', null, name)]),
          ),
        );
      if (extra.length > 0)
        parts.push(
          h(
            'p',
            { class: 'feedback-columns' },
            `Column${extra.length === 1 ? '' : 's'} not asked for: `,
            extra.map((name, i) => [i > 0 ? ', ' : '', h('code', null, name)]),
          ),
        );
    }
    parts.push(h('p', { class: 'feedback-rows' }, rowsText(feedback.rows)));
    if (feedback.order)
      parts.push(
        h('p', { class: 'feedback-order' }, 'The rows are right, but the order matters here: sort them (ORDER BY).'),
      );
    if (feedback.missingRow)
      parts.push(rowTable('A row your answer is missing', feedback.missingRow, 'feedback-missing'));
    if (feedback.extraRow) parts.push(rowTable('A row that should not be there', feedback.extraRow, 'feedback-extra'));
    if (feedback.truncated)
      parts.push(
        h('p', null, "Your result was cut at the server's limit on rows or bytes: it is far larger than the answer."),
      );
  }
  return h('div', { class: 'verdict is-wrong', id: 'exercise-verdict', dataset: { correct: 'false' } }, parts);
}

/**
 * @param {any} answer the body of POST /exercises/{id}/check
 * @param {Array<{ text: string }>} statements
 */
export function showFeedback(answer, statements) {
  const box = $('exercise-feedback');
  box.replaceChildren(feedbackNode(answer, statements));
  // On a projector the feedback may start below the window: brought up, moving the page no more than needed.
  box.scrollIntoView({ block: 'nearest' });
}
