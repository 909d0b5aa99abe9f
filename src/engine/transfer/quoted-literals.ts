/**
 * Double-quoted string literals in an import's triggers and views, made
 * single-quoted. SQLite's CLI reads `"text"` as a string where it names no
 * column (https://sqlite.org/quirks.html#dblquote); the engine's SQLite is
 * built without that fallback, so a published file whose trigger writes
 * `"Congrats…"` fails there with "no such column". The import rewrites such a
 * token into `'Congrats…'` where SQLite's rule would: in the trigger's or the
 * view's body (not its name or column list), when the text names nothing the
 * statement could mean by it, which is judged here without a database: not a
 * column, table or view of the import or of the database it goes into, not
 * qualified (`"t".x`, `t."x"`), not a function or table-valued call, not an
 * alias (`AS "x"`), not a common table expression (`WITH "x" AS (`). The rewritten
 * statement is what runs and what the journal records.
 */
import { isPunct, isWord, tokenize, type Token } from '../dialect/tokenize';

export interface QuotedLiteralRewrite {
  /** The statement with its double-quoted literals single-quoted (itself when none). */
  readonly sql: string;
  /** How many were rewritten. */
  readonly literals: number;
}

/** Where the body of `CREATE [TEMP] TRIGGER … ON table` or `CREATE [TEMP] VIEW name [(cols)] AS` starts. */
function bodyStart(tokens: readonly Token[]): number | undefined {
  const object = tokens.findIndex((token) => isWord(token, 'TRIGGER', 'VIEW'));
  if (object < 0) return undefined;
  const word = isWord(tokens[object], 'TRIGGER') ? 'ON' : 'AS';
  let depth = 0;
  for (let i = object + 1; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) depth++;
    else if (isPunct(tokens[i], ')')) depth--;
    else if (depth === 0 && isWord(tokens[i], word)) return word === 'ON' ? i + 2 : i + 1;
  }
  return undefined;
}

/** Whether the double-quoted token at `i` is, by its place, an identifier whatever it names. */
function isIdentifierByPlace(tokens: readonly Token[], i: number): boolean {
  const before = tokens[i - 1];
  const after = tokens[i + 1];
  return (
    isPunct(before, '.') ||
    isPunct(after, '.') ||
    isPunct(after, '(') ||
    isWord(before, 'AS') ||
    // WITH "name" AS (…): a common table expression's name.
    (isWord(after, 'AS') && (isPunct(tokens[i + 2], '(') || isWord(tokens[i + 2], 'MATERIALIZED', 'NOT'))) ||
    isWord(before, 'FROM', 'JOIN', 'INTO', 'UPDATE', 'TABLE', 'OF')
  );
}

/**
 * The statement with the double-quoted literals of its body single-quoted.
 * `names` holds, lower-cased, every name the statement may mean by a
 * double-quoted token (columns, tables, views): a token naming one of them
 * stays an identifier.
 */
export function singleQuoteLiterals(sql: string, names: ReadonlySet<string>): QuotedLiteralRewrite {
  if (!sql.includes('"')) return { sql, literals: 0 };
  const tokens = tokenize(sql);
  const from = bodyStart(tokens);
  if (from === undefined) return { sql, literals: 0 };
  let out = '';
  let copied = 0;
  let literals = 0;
  for (let i = from; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.kind !== 'identifier' || !token.text.startsWith('"')) continue;
    const value = token.value ?? '';
    if (names.has(value.toLowerCase()) || isIdentifierByPlace(tokens, i)) continue;
    out += `${sql.slice(copied, token.start)}'${value.replace(/'/g, "''")}'`;
    copied = token.end;
    literals++;
  }
  return literals === 0 ? { sql, literals } : { sql: out + sql.slice(copied), literals };
}

/**
 * Every name a CREATE TABLE or CREATE VIEW statement declares or mentions,
 * lower-cased: a superset of its table's and columns' names, which is all
 * singleQuoteLiterals needs (a name kept as an identifier is never wrongly
 * made a string).
 */
export function namesOf(sql: string): string[] {
  const names: string[] = [];
  for (const token of tokenize(sql)) {
    if (token.kind === 'word' || token.kind === 'identifier') names.push((token.value ?? token.text).toLowerCase());
  }
  return names;
}
