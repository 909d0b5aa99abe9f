/**
 * The one rule for names a client may not use: the service's own objects
 * (`_sqlscribe…`: the journal position table, the savepoints of groups and
 * sessions), `dbstat` and the `pragma_*` table functions other than the
 * introspection ones (they list every table and page, ours included, and file
 * paths), and SQLite's schema table.
 *
 * The introspection functions (`pragma_table_info` and the others of
 * pragmas.ts) are read as SQLite reads them, in a FROM list, from the schema
 * main; their arguments are values (the table they name is checked when the
 * statement runs, pragma-guards.ts), and their hidden columns `arg` and
 * `schema`, which would pass an argument past that check, may not be named.
 *
 * SQLite takes a name quoted any way, in any case, and even a single-quoted
 * string where a name is expected (`FROM '_sqlscribe_meta'`, `x IN 'tbl'`).
 * So every word and quoted identifier counts as a name, and a string counts
 * as one unless it stands where only a value can: after an operator or an
 * expression keyword, or inside a VALUES row or an IN (…) list.
 *
 * The schema table (`sqlite_schema`, `sqlite_master` and the temp ones) stays
 * readable, because students look up their tables there: in a FROM list it is
 * replaced by a subquery that leaves out the service's rows. Anywhere else it
 * is refused, and so is any mention of it in a view or a trigger: their text
 * is kept in the schema and shown back by /schema, and the subquery would
 * stand there in place of what the student wrote.
 *
 * A trigger's body holds several statements separated by semicolons; each
 * starts afresh, as if it stood alone.
 */

import { EngineError } from '../../errors';
import { checkSchemaName, introspectionFunction, refusedPragmaFunction } from './pragmas';
import { RESERVED_SAVEPOINT_PREFIX } from './statement';
import { isPunct, isWord, nameOf, type Token } from './tokenize';

const PRAGMA_PREFIX = 'pragma_';
const FORBIDDEN_NAMES = new Set(['dbstat']);
const SCHEMA_TABLES = new Set(['sqlite_schema', 'sqlite_master', 'sqlite_temp_schema', 'sqlite_temp_master']);

/** A string right after one of these is an operand, never a name. `IN` is not one: `x IN 'tbl'` names a table. */
const VALUE_KEYWORDS = [
  'SELECT',
  'DISTINCT',
  'ALL',
  'WHERE',
  'HAVING',
  'AND',
  'OR',
  'NOT',
  'IS',
  'LIKE',
  'GLOB',
  'MATCH',
  'REGEXP',
  'BETWEEN',
  'ESCAPE',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'LIMIT',
  'OFFSET',
  'RETURNING',
  'DEFAULT',
];

/** Words that end a FROM list at its own paren depth. */
const FROM_ENDERS = [
  'WHERE',
  'GROUP',
  'HAVING',
  'WINDOW',
  'ORDER',
  'LIMIT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'RETURNING',
  'SELECT',
  'VALUES',
  'SET',
];

/** Words after a table reference that are not an alias of it. */
const NOT_ALIASES = [
  'WHERE',
  'GROUP',
  'HAVING',
  'WINDOW',
  'ORDER',
  'LIMIT',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'RETURNING',
  'ON',
  'USING',
  'JOIN',
  'LEFT',
  'RIGHT',
  'FULL',
  'INNER',
  'CROSS',
  'NATURAL',
  'OUTER',
  'INDEXED',
  'NOT',
];

/**
 * Keeps the rows of SQLite's schema table that describe the service's own
 * objects out of sight. The prefix is spelled as a blob: SQLite names an
 * expression's result column by its text, so `SELECT (SELECT count(*) FROM
 * sqlite_schema)` answers with this filter as a column name, which must not
 * show the reserved name itself.
 */
const PREFIX_HEX = Buffer.from(RESERVED_SAVEPOINT_PREFIX, 'utf8').toString('hex');
const PREFIX_TEXT = `CAST(X'${PREFIX_HEX}' AS TEXT)`;
const HIDE_INTERNAL = `substr(lower(name), 1, ${RESERVED_SAVEPOINT_PREFIX.length}) <> ${PREFIX_TEXT} AND substr(lower(tbl_name), 1, ${RESERVED_SAVEPOINT_PREFIX.length}) <> ${PREFIX_TEXT}`;

/** A replacement of source[start, end) by text. */
export interface NameEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** How checkNames treats the statement. */
export interface NameRules {
  /** A view or trigger (STORED_KINDS): the schema table is refused anywhere in it. */
  readonly stored?: boolean;
}

/** What the walk has seen of the introspection functions. */
interface Introspection {
  /** The first introspection function read, e.g. pragma_table_info. */
  read: string | undefined;
  /** The first name `arg` or `schema`: with an introspection function, one of its hidden columns. */
  hidden: Token | undefined;
  /** The index of the `(` that opens an introspection function's arguments. */
  callOpen: number;
}

/** The hidden columns of a pragma_* function: a constraint on them is an argument too. */
const HIDDEN_COLUMNS = new Set(['arg', 'schema']);

/** What is known of one paren depth while walking the tokens. */
interface Frame {
  /** Inside a FROM list: a name after `,` or `(` is a table. */
  inFrom: boolean;
  /** An expression list (VALUES row, IN list, operand): a string after `(` or `,` is a value. */
  values: boolean;
}

/**
 * Throws FORBIDDEN_STATEMENT for the first name a client may not use, and
 * returns the edits that make each schema-table reference in a FROM list
 * safe to read. Tokens are one statement's, as the classifier has them.
 */
export function checkNames(sql: string, tokens: readonly Token[], rules: NameRules = {}): NameEdit[] {
  const edits: NameEdit[] = [];
  const introspection: Introspection = { read: undefined, hidden: undefined, callOpen: -1 };
  let frames: Frame[] = [{ inFrom: false, values: false }];
  let closedValues = false; // the last `)` closed a value list, so `, (` continues VALUES rows
  tokens.forEach((token, i) => {
    if (token.kind === 'semicolon') {
      frames = [{ inFrom: false, values: false }];
      closedValues = false;
      return;
    }
    const frame = frames[frames.length - 1] as Frame;
    if (isPunct(token, '(')) {
      const call = i === introspection.callOpen;
      frames.push({
        inFrom: !call && startsTableReference(tokens, i, frame),
        values: call || opensValues(tokens, i, frame, closedValues),
      });
    } else if (isPunct(token, ')') && frames.length > 1) {
      closedValues = frames.pop()?.values === true;
      return;
    } else if (isFrom(tokens, i) || isWord(token, 'JOIN')) {
      frame.inFrom = true;
    } else if (isWord(token, ...FROM_ENDERS)) {
      frame.inFrom = false;
    }
    if (!isPunct(token, ',')) closedValues = false;
    const edit = checkToken(sql, tokens, i, frame, rules, introspection);
    if (edit !== undefined && rules.stored === true) throw forbidden(nameOf(tokens[i] as Token));
    if (edit !== undefined) edits.push(edit);
  });
  if (introspection.read !== undefined && introspection.hidden !== undefined) {
    const read = introspection.read;
    throw new EngineError('INTROSPECTION_FORM', {
      detail: `${read} takes its arguments in parentheses, as in ${read}('t'): its hidden column ${nameOf(introspection.hidden)} cannot be named`,
    });
  }
  return edits;
}

function checkToken(
  sql: string,
  tokens: readonly Token[],
  i: number,
  frame: Frame,
  rules: NameRules,
  introspection: Introspection,
): NameEdit | undefined {
  const token = tokens[i] as Token;
  if (!isName(tokens, i, frame)) return undefined;
  const name = nameOf(token).toLowerCase();
  if (token.kind !== 'string' && HIDDEN_COLUMNS.has(name)) introspection.hidden ??= token;
  if (name.startsWith(PRAGMA_PREFIX)) {
    checkIntrospectionFunction(tokens, i, frame, rules);
    introspection.read ??= name;
    if (isPunct(tokens[i + 1], '(')) introspection.callOpen = i + 1;
    return undefined;
  }
  if (name.startsWith(RESERVED_SAVEPOINT_PREFIX) || FORBIDDEN_NAMES.has(name)) throw forbidden(nameOf(token));
  return SCHEMA_TABLES.has(name) ? schemaTableEdit(sql, tokens, i, frame) : undefined;
}

/**
 * A `pragma_*` name: an introspection function read at the head of a FROM
 * entry, from main, in a statement that runs now (a view's or a trigger's
 * text is stored and run later, where the check of its arguments would not
 * stand), or a qualifier of its columns (`pragma_table_info.name`).
 */
function checkIntrospectionFunction(tokens: readonly Token[], i: number, frame: Frame, rules: NameRules): void {
  const token = tokens[i] as Token;
  const name = nameOf(token);
  if (introspectionFunction(name) === undefined) throw refusedPragmaFunction(name);
  if (rules.stored === true) {
    throw new EngineError('INTROSPECTION_FORM', {
      detail: `a view or trigger cannot read ${name}: run the introspection itself when it is needed`,
    });
  }
  if (isPunct(tokens[i + 1], '.')) return;
  const qualified = isPunct(tokens[i - 1], '.');
  const start = qualified ? i - 2 : i;
  if (!isTablePosition(tokens, start, frame)) {
    throw new EngineError('INTROSPECTION_FORM', {
      detail: `${name} is read in a FROM list only, as in SELECT * FROM ${name}('t')`,
    });
  }
  const schema = qualified ? tokens[i - 2] : undefined;
  if (schema !== undefined) checkSchemaName(nameOf(schema), `${nameOf(schema)}.${name}`);
}

function forbidden(name: string): EngineError {
  return new EngineError('FORBIDDEN_STATEMENT', { detail: `the name ${name}` });
}

/** Whether the token at i can stand for a name: a word, a quoted identifier, or a string where SQLite may read one. */
function isName(tokens: readonly Token[], i: number, frame: Frame): boolean {
  const token = tokens[i] as Token;
  if (token.kind === 'word' || token.kind === 'identifier') return true;
  return token.kind === 'string' && !isValueString(tokens, i, frame);
}

function isValueString(tokens: readonly Token[], i: number, frame: Frame): boolean {
  const before = tokens[i - 1];
  const after = tokens[i + 1];
  if (isPunct(after, '.') || isPunct(after, '(') || isPunct(before, '.')) return false;
  if (isTablePosition(tokens, i, frame)) return false;
  if (before?.kind === 'punct') return before.text === '(' || before.text === ',' ? frame.values : before.text !== ')';
  return isWord(before, ...VALUE_KEYWORDS) || (isWord(before, 'FROM') && !isFrom(tokens, i - 1)); // IS DISTINCT FROM 'x'
}

/** FROM that opens a FROM list: not the one of `a IS DISTINCT FROM b`. */
function isFrom(tokens: readonly Token[], i: number): boolean {
  return isWord(tokens[i], 'FROM') && !isWord(tokens[i - 1], 'DISTINCT');
}

/** Whether the token at i begins an entry of a FROM list (a table, a subquery, a parenthesized join). */
function isTablePosition(tokens: readonly Token[], i: number, frame: Frame): boolean {
  const before = tokens[i - 1];
  if (isFrom(tokens, i - 1) || isWord(before, 'JOIN')) return true;
  return frame.inFrom && (isPunct(before, ',') || isPunct(before, '('));
}

/** A `(` at the head of a FROM entry may hold a join of its own: `FROM (a JOIN b)`. */
function startsTableReference(tokens: readonly Token[], open: number, frame: Frame): boolean {
  return isTablePosition(tokens, open, frame);
}

/** Whether the `(` at `open` holds operands: a VALUES row, an IN list, a parenthesized expression. */
function opensValues(tokens: readonly Token[], open: number, frame: Frame, closedValues: boolean): boolean {
  const before = tokens[open - 1];
  if (isTablePosition(tokens, open, frame)) return false;
  // RAISE(ABORT, 'message') in a trigger: the message is a value.
  if (isWord(before, 'VALUES', 'IN', 'RAISE', ...VALUE_KEYWORDS)) return true;
  if (isPunct(before, '(')) return frame.values;
  if (isPunct(before, ',')) return frame.values || closedValues;
  return before?.kind === 'punct' && before.text !== ')' && before.text !== '.';
}

/**
 * A schema-table reference that heads a FROM entry becomes a subquery under
 * the same name; `sqlite_schema.name` qualifies a column of that entry and is
 * left alone. Any other use (DELETE FROM, UPDATE, INSERT INTO, `x IN
 * sqlite_schema`, REFERENCES…) is refused.
 */
function schemaTableEdit(sql: string, tokens: readonly Token[], i: number, frame: Frame): NameEdit | undefined {
  const qualified = isPunct(tokens[i - 1], '.');
  if (isPunct(tokens[i + 1], '.')) return undefined;
  const start = qualified ? i - 2 : i;
  const head = tokens[start] as Token;
  const isDelete = isWord(tokens[start - 2], 'DELETE');
  if (!isTablePosition(tokens, start, frame) || isDelete) throw forbidden(nameOf(tokens[i] as Token));
  const token = tokens[i] as Token;
  const source = sql.slice(head.start, token.end);
  const alias = hasAlias(tokens[i + 1]) ? '' : ` AS ${token.text}`;
  return { start: head.start, end: token.end, text: `(SELECT * FROM ${source} WHERE ${HIDE_INTERNAL})${alias}` };
}

function hasAlias(next: Token | undefined): boolean {
  if (next === undefined) return false;
  if (next.kind === 'identifier' || next.kind === 'string') return true;
  return next.kind === 'word' && !isWord(next, ...NOT_ALIASES);
}

/** Applies the edits of checkNames to the statement's text. */
export function applyNameEdits(sql: string, edits: readonly NameEdit[]): string {
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += sql.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + sql.slice(at);
}
