// Splits the editor's SQL into statements the way the server does
// (src/engine/dialect/split.ts): on top-level semicolons, never inside
// strings, quoted names or comments, nor inside CREATE TRIGGER … END; empty
// statements are dropped. Each statement keeps its offsets in the editor, so
// the error's `statement` index (0-based) can be marked in the text.

const Tk = { Semi: 0, Other: 1, Explain: 2, Create: 3, Temp: 4, Trigger: 5, End: 6 };
const St = { Start: 0, Normal: 1, Explain: 2, Create: 3, Trigger: 4, Semi: 5, End: 6 };
// The state machine of sqlite3_complete(), as in split.ts.
const TRANSITIONS = [
  [St.Start, St.Normal, St.Explain, St.Create, St.Normal, St.Normal, St.Normal],
  [St.Start, St.Normal, St.Normal, St.Normal, St.Normal, St.Normal, St.Normal],
  [St.Start, St.Explain, St.Normal, St.Create, St.Normal, St.Normal, St.Normal],
  [St.Start, St.Normal, St.Normal, St.Normal, St.Create, St.Trigger, St.Normal],
  [St.Semi, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.Trigger],
  [St.Semi, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.End],
  [St.Start, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.Trigger, St.Trigger],
];

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

/** Tokens with their offsets: { kind: 'semi' | 'word' | 'other', start, end, upper? }. */
function tokens(sql) {
  const out = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') { i++; continue; }
    if (sql.startsWith('--', i)) { const nl = sql.indexOf('\n', i); i = nl === -1 ? sql.length : nl + 1; continue; }
    if (sql.startsWith('/*', i)) { const close = sql.indexOf('*/', i + 2); i = close === -1 ? sql.length : close + 2; continue; }
    const start = i;
    if (c === ';') { out.push({ kind: 'semi', start, end: i + 1 }); i++; continue; }
    if (c === "'" || c === '"' || c === '`') {
      // A doubled quote stands for one; an unterminated literal runs to the end.
      i++;
      for (;;) {
        const close = sql.indexOf(c, i);
        if (close === -1) { i = sql.length; break; }
        if (sql[close + 1] === c) { i = close + 2; continue; }
        i = close + 1;
        break;
      }
      out.push({ kind: 'other', start, end: i });
      continue;
    }
    if (c === '[') { const close = sql.indexOf(']', i + 1); i = close === -1 ? sql.length : close + 1; out.push({ kind: 'other', start, end: i }); continue; }
    if ((c === ':' || c === '@' || c === '?') && WORD.test(sql[i + 1] ?? '')) {
      // A parameter (:name, @name, ?12) is one token, whatever its name.
      i++;
      while (i < sql.length && WORD.test(sql[i])) i++;
      out.push({ kind: 'other', start, end: i });
      continue;
    }
    if (WORD.test(c)) {
      while (i < sql.length && WORD.test(sql[i])) i++;
      out.push({ kind: 'word', start, end: i, upper: sql.slice(start, i).toUpperCase() });
      continue;
    }
    out.push({ kind: 'other', start, end: i + 1 });
    i++;
  }
  return out;
}

function classOf(token) {
  if (token.kind === 'semi') return Tk.Semi;
  if (token.kind !== 'word') return Tk.Other;
  switch (token.upper) {
    case 'EXPLAIN': return Tk.Explain;
    case 'CREATE': return Tk.Create;
    case 'TEMP': case 'TEMPORARY': return Tk.Temp;
    case 'TRIGGER': return Tk.Trigger;
    case 'END': return Tk.End;
    default: return Tk.Other;
  }
}

/** The statements of `sql`: [{ start, end, text }], text from first to last token, without the `;`. */
export function splitStatements(sql) {
  const statements = [];
  let state = St.Start;
  let first;
  let last;
  const push = () => {
    if (first !== undefined) statements.push({ start: first.start, end: last.end, text: sql.slice(first.start, last.end) });
    first = last = undefined;
  };
  for (const token of tokens(sql)) {
    const ends = token.kind === 'semi' && TRANSITIONS[state][Tk.Semi] === St.Start;
    state = TRANSITIONS[state][classOf(token)];
    if (ends) { push(); continue; }
    first ??= token;
    last = token;
  }
  push();
  return statements;
}
