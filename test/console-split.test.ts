/**
 * The console splits the editor's SQL in the browser to mark the statement an
 * error names; it must split exactly as the server does. Its splitter is a
 * separate ES module (the browser cannot load the server's), so this checks
 * the two against each other over generated SQL: quotes, comments,
 * semicolons in every place, and triggers whose bodies hold semicolons (SQL
 * the server refuses as a syntax error is left out: the console marks nothing
 * in it).
 */
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { splitStatements } from '../src/engine/dialect/split';

type ConsoleSplit = (sql: string) => Array<{ start: number; end: number; text: string }>;

const PIECES = [
  'SELECT 1', ';', ' ', '\n', "'a;b'", "'it''s'", '"x;y"', '[n;m]', '`q;r`', '-- c;d\n', '/* e;f */', 'x', 'END', 'BEGIN',
  'CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES (1); END', 'CREATE TEMP TRIGGER', 'EXPLAIN', 'CREATE', 'TRIGGER', 'é',
];

t.test('the console splits SQL exactly as the server does', async (t) => {
  const module = (await import(path.join(__dirname, '../src/console/static/sql-split.js'))) as { splitStatements: ConsoleSplit };
  const fixed = ["SELECT 1; SELECT 'a;b'", 'CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END; SELECT 3', '; ;  ;', '-- only a comment', 'SELECT 1 /* ; */ ; x'];
  for (const sql of fixed) t.same(module.splitStatements(sql).map((s) => s.text.trim()), splitStatements(sql).map((s) => s.trim()), sql);
  let compared = 0;
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }), (pieces) => {
      const sql = pieces.join(' ');
      let inServer: string[];
      try {
        inServer = splitStatements(sql).map((s) => s.trim());
      } catch {
        return true; // the server refuses it (a syntax error): the console has nothing to mark
      }
      compared++;
      const inConsole = module.splitStatements(sql);
      return JSON.stringify(inConsole.map((s) => s.text.trim())) === JSON.stringify(inServer) && inConsole.every((s) => sql.slice(s.start, s.end) === s.text);
    }),
    { numRuns: 300 },
  );
  t.ok(compared > 100, `${compared} generated scripts compared (the rest were refused by the server)`);
});
