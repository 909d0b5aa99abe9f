// @ts-check
// The console's SQL editor: CodeMirror 6 with the SQLite dialect, bundled by
// scripts/build-console.mjs into dist/console/editor.js so that the page
// loads it from its own origin (no network, no bare module names at run time).
//
// sql-view.js uses only what this module exports; CodeMirror stays behind it.

import { basicSetup } from 'codemirror';
import { Compartment, EditorState, RangeSetBuilder, StateEffect, StateField } from '@codemirror/state';
import { Decoration, EditorView, WidgetType, keymap } from '@codemirror/view';
import { indentWithTab } from '@codemirror/commands';
import { SQLite, sql } from '@codemirror/lang-sql';

/**
 * The failing statement's place in the text.
 * @typedef {{ start: number, end: number }} Range
 */

/** Sets the failing statement's range or clears it (null). */
const setFailed = /** @type {import('@codemirror/state').StateEffectType<Range | null>} */ (StateEffect.define());

/** A visible word before the failing statement, so the mark is not colour alone. */
class FailedFlag extends WidgetType {
  eq() {
    return true;
  }

  toDOM() {
    const flag = document.createElement('span');
    flag.className = 'cm-failed-flag';
    flag.textContent = 'failed ▸';
    return flag;
  }
}

/**
 * One mark per line of the range (the first carries the id tests and the
 * error box refer to, so ids stay unique), and the flag before it. Any edit
 * clears it: the mark belongs to the text that was run.
 * @param {import('@codemirror/state').Text} doc
 * @param {number} start
 * @param {number} end
 */
function failedDecorations(doc, start, end) {
  /** @type {RangeSetBuilder<Decoration>} */
  const builder = new RangeSetBuilder();
  builder.add(start, start, Decoration.widget({ widget: new FailedFlag(), side: -1 }));
  let first = true;
  for (let pos = start; pos < end;) {
    const line = doc.lineAt(pos);
    const to = Math.min(end, line.to);
    if (to > pos) {
      builder.add(pos, to, Decoration.mark({ class: 'cm-failed', attributes: first ? { id: 'sql-failed-mark' } : {} }));
      first = false;
    }
    pos = line.to + 1;
  }
  return builder.finish();
}

/** @type {StateField<import('@codemirror/view').DecorationSet>} */
const failedField = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    for (const effect of tr.effects) {
      if (effect.is(setFailed))
        return effect.value === null
          ? Decoration.none
          : failedDecorations(tr.state.doc, effect.value.start, effect.value.end);
    }
    return tr.docChanged ? Decoration.none : value;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/**
 * The text of the statement around `pos` (between semicolons: good enough to find its tables).
 * @param {string} text
 * @param {number} pos
 * @returns {string}
 */
function statementAround(text, pos) {
  const start = text.lastIndexOf(';', pos - 1) + 1;
  const next = text.indexOf(';', pos);
  return text.slice(start, next === -1 ? text.length : next);
}

const TABLE_REFERENCE =
  /\b(?:from|join|update|into|table)\s+(?:"((?:[^"]|"")+)"|`([^`]+)`|\[([^\]]+)\]|([A-Za-z_][\w$]*))/gi;

/**
 * Table names the statement names after FROM, JOIN, UPDATE, INTO.
 * @param {string} statement
 * @returns {string[]}
 */
export function referencedTables(statement) {
  /** @type {string[]} */
  const names = [];
  for (const match of statement.matchAll(TABLE_REFERENCE)) {
    const name = match[1]?.replace(/""/g, '"') ?? match[2] ?? match[3] ?? match[4];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * Columns of the tables the current statement names, wherever a bare word is
 * typed: `SELECT ` before `FROM pupils` offers pupils' columns. lang-sql's own
 * source completes tables, `table.column` and keywords.
 * @param {() => Record<string, string[]>} getSchema
 * @returns {import('@codemirror/autocomplete').CompletionSource}
 */
function columnsSource(getSchema) {
  return (context) => {
    const word = context.matchBefore(/[\w$]*/);
    if (
      !word ||
      (word.from === word.to && !context.explicit && !/\s|,|\($/.test(context.state.sliceDoc(word.from - 1, word.from)))
    )
      return null;
    if (context.state.sliceDoc(word.from - 1, word.from) === '.') return null;
    const schema = getSchema();
    const text = context.state.doc.toString();
    const options = [];
    for (const table of referencedTables(statementAround(text, context.pos))) {
      const key = Object.keys(schema).find((name) => name.toLowerCase() === table.toLowerCase());
      for (const column of key === undefined ? [] : schema[key])
        options.push({ label: column, type: 'property', detail: key, boost: 10 });
    }
    return options.length === 0 ? null : { from: word.from, options, validFor: /^[\w$]*$/ };
  };
}

/**
 * Creates the editor in `parent`. `contentAttributes` go on the editable
 * element (its id, its accessible name); `onRun` is Ctrl/Cmd+Enter; `onChange`
 * receives the new text.
 * @param {{ parent: Element, doc?: string, nonce?: string, contentAttributes?: Record<string, string>,
 *   onRun?: () => void, onChange?: (text: string) => void }} options
 */
export function createSqlEditor({
  parent,
  doc = '',
  nonce = '',
  contentAttributes = {},
  onRun = () => {},
  onChange = () => {},
}) {
  /** @type {Record<string, string[]>} */
  let schema = {};
  const language = new Compartment();
  const languageFor = () => [
    sql({ dialect: SQLite, schema, upperCaseKeywords: true }),
    SQLite.language.data.of({ autocomplete: columnsSource(() => schema) }),
  ];
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        keymap.of([
          {
            key: 'Mod-Enter',
            preventDefault: true,
            run: () => {
              onRun();
              return true;
            },
          },
        ]),
        basicSetup,
        // Tab indents; Escape then Tab still leaves the editor (CodeMirror's tab-focus mode), so focus is never trapped.
        keymap.of([indentWithTab]),
        language.of(languageFor()),
        failedField,
        EditorView.lineWrapping,
        EditorView.cspNonce.of(nonce),
        EditorView.contentAttributes.of(contentAttributes),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    /** @param {string} text */
    setText(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        selection: { anchor: text.length },
      });
    },
    /**
     * Marks [start, end) as the failing statement; no arguments clears it.
     * @param {number} [start]
     * @param {number} [end]
     */
    markRange(start, end) {
      view.dispatch({
        effects: setFailed.of(start === undefined ? null : { start, end: /** @type {number} */ (end) }),
      });
    },
    /**
     * Table name → column names, for completion.
     * @param {Record<string, string[]>} next
     */
    setSchema(next) {
      schema = next;
      view.dispatch({ effects: language.reconfigure(languageFor()) });
    },
    focus: () => view.focus(),
  };
}
