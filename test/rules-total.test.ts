/**
 * The command rule table is total: a command added to the command union
 * without its row (who may send it, whether it writes) is a compile error,
 * not a replica that runs a write. Proved by compiling the real table
 * against a copy of the command list with one command more. Only the few
 * files that define the table are compiled (their other imports stay
 * unresolved), so the check costs about a second, not a whole typecheck.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const COMMANDS = path.join(ROOT, 'src/bus/commands.ts');
const RULES = path.join(ROOT, 'src/bus/command-rules.ts');
const FILES = [COMMANDS, RULES, path.join(ROOT, 'src/access/principal.ts'), path.join(ROOT, 'src/engine/batch.ts')];

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  noResolve: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  types: [],
  lib: ['lib.es2022.d.ts'],
};

/** A module left out on purpose; its types are `any`, which the table's checks do not lean on. */
const UNRESOLVED_MODULE = 2307;
/** The files whose diagnostics count: the others are compiled only for their types, some of which are left `any`. */
const CHECKED = new Set(['src/bus/commands.ts', 'src/bus/command-rules.ts']);

function findingsOf(program: ts.Program): Finding[] {
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.code !== UNRESOLVED_MODULE)
    .map((d) => ({
      code: d.code,
      file: d.file === undefined ? '' : path.relative(ROOT, d.file.fileName),
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }))
    .filter((finding) => CHECKED.has(finding.file));
}

interface Finding {
  readonly code: number;
  readonly file: string;
  readonly message: string;
}

/** Compiles the table with one file's text replaced. */
function compileWith(file: string, text: string): Finding[] {
  const host = ts.createCompilerHost(OPTIONS);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : read(name, language, ...rest);
  return findingsOf(ts.createProgram(FILES, OPTIONS, host));
}

const source = fs.readFileSync(COMMANDS, 'utf8');
const UNION_START = 'export type Command =\n';

t.test('the table as it is compiles', async (t) => {
  t.same(compileWith(COMMANDS, source), [], 'no diagnostics');
});

t.test('a command added without its row does not compile', async (t) => {
  t.ok(source.includes(UNION_START), 'the command union is where the test adds to it');
  const added = source.replace(
    UNION_START,
    `${UNION_START}  | { readonly type: 'vacuum-database'; readonly db: unknown }\n`,
  );
  const findings = compileWith(COMMANDS, added);
  t.equal(findings.length, 1, 'one error');
  t.match(
    findings[0],
    { code: 2741, file: 'src/bus/command-rules.ts', message: /'"vacuum-database"' is missing/ },
    'the rule table misses the new command',
  );
});

t.test('a row without its write rule does not compile', async (t) => {
  const rules = fs.readFileSync(RULES, 'utf8');
  const row = /^\s*'list-tokens': \{[^\n]*\},$/m.exec(rules)?.[0];
  t.ok(row?.includes(', writes: null }'), 'the row the test edits is there');
  const findings = compileWith(RULES, rules.replace(row ?? '', (row ?? '').replace(', writes: null }', ' }')));
  t.equal(findings.length, 1, 'one error');
  t.match(
    findings[0],
    { file: 'src/bus/command-rules.ts', message: /'writes' is missing/ },
    'the row misses its write rule',
  );
});
