/**
 * The one SQL splitter (src/engine/dialect/statement-spans.ts) serves both
 * the server and the web console, which loads it built as a browser module.
 * This checks that build against the source, and the splitter's light
 * reading of the text against the strict tokenizer the server classifies
 * statements with, over generated SQL: quotes, comments, semicolons in every
 * place, and triggers whose bodies hold semicolons.
 */
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { statementSpans, type ScriptSplit } from '../src/engine/dialect/statement-spans';
import { tokenize } from '../src/engine/dialect/tokenize';

const PIECES = [
  'SELECT 1',
  ';',
  ' ',
  '\n',
  "'a;b'",
  "'it''s'",
  '"x;y"',
  '[n;m]',
  '`q;r`',
  '-- c;d\n',
  '/* e;f */',
  'x',
  'END',
  'BEGIN',
  'CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES (1); END',
  'CREATE TEMP TRIGGER',
  'EXPLAIN',
  'CREATE',
  'TRIGGER',
  'é',
  "x'0a'",
  ':p',
  '$v',
  '12.5e3',
  '(',
  ')',
  "'",
  '/*',
];

const scripts = fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }).map((pieces) => pieces.join(' '));

/** The strict tokens of `sql` as text, or null when the server's tokenizer refuses it. */
function strictTokens(sql: string): string[] | null {
  try {
    return tokenize(sql).map((token) => token.text);
  } catch {
    return null;
  }
}

t.test('splits at top-level semicolons only, and keeps trigger bodies whole', async (t) => {
  const texts = (sql: string): string[] => statementSpans(sql).statements.map((s) => s.text);
  t.same(texts("SELECT 1; SELECT 'a;b'"), ['SELECT 1', "SELECT 'a;b'"]);
  t.same(texts('CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END; SELECT 3'), [
    'CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END',
    'SELECT 3',
  ]);
  t.same(texts('; ;  ;'), []);
  t.same(texts('-- only a comment'), []);
  t.same(texts('SELECT /* ; */ 1 ; x -- ;'), ['SELECT /* ; */ 1', 'x'], 'inner comments kept, trailing ones dropped');
  t.same(statementSpans('SELECT 1; /* open').unterminated, 'comment');
  t.same(statementSpans("SELECT 'open").unterminated, 'string literal');
  t.same(statementSpans("SELECT x'0a").unterminated, 'blob literal');
  t.same(statementSpans('SELECT [open').unterminated, 'quoted identifier');
  t.same(
    statementSpans('SELECT 1; /* open').statements.map((s) => s.text),
    ['SELECT 1'],
    'what came before an open comment is still a statement',
  );
});

t.test('the browser build of the splitter is the same code', async (t) => {
  const built = (await import(path.join(__dirname, '../dist/console/statement-spans.js'))) as {
    statementSpans: (sql: string) => ScriptSplit;
  };
  fc.assert(
    fc.property(scripts, (sql) => JSON.stringify(built.statementSpans(sql)) === JSON.stringify(statementSpans(sql))),
    { numRuns: 300 },
  );
});

t.test(
  'every statement is whole tokens of the strict tokenizer, none lost, none split inside a literal or comment',
  async (t) => {
    let compared = 0;
    fc.assert(
      fc.property(scripts, (sql) => {
        const whole = strictTokens(sql);
        const { statements, unterminated } = statementSpans(sql);
        if (whole === null) return true; // the server refuses it as a syntax error; unterminated text is checked above
        compared++;
        if (unterminated !== null) return false;
        const inStatements = statements.flatMap((s) => strictTokens(s.text) ?? ['<refused>']);
        const endingSemicolons = whole.length - inStatements.length;
        const offsetsHold = statements.every((s) => sql.slice(s.start, s.end) === s.text);
        return (
          offsetsHold &&
          endingSemicolons >= 0 &&
          JSON.stringify(whole.filter((text) => text !== ';')) ===
            JSON.stringify(inStatements.filter((text) => text !== ';'))
        );
      }),
      { numRuns: 500 },
    );
    t.ok(compared > 100, `${compared} generated scripts compared (the rest were refused by the strict tokenizer)`);
  },
);
