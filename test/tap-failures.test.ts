// `npm test` names the failed assertions at the end of its output, read back from tap's result
// files: a CI log cut to its tail must still say what failed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

interface Failure {
  path: string[];
  diagnostics: string[];
}
interface TapFailures {
  failuresIn(tap: string): Failure[];
  failureReport(resultsDir: string, since: number): string;
}

const modulePath = path.join(__dirname, '..', 'scripts', 'tap-failures.mjs');

const nestedFailure = [
  'TAP version 14',
  '# Subtest: outer',
  '    # Subtest: inner',
  '        ok 1 - fine first',
  '        not ok 2 - one is two',
  '          ---',
  '          compare: ===',
  '          source: >',
  "            import t from 'tap';",
  '          diff: |',
  '            -2',
  '            +1',
  '          ...',
  '        ',
  '        1..2',
  '    not ok 1 - inner # time=22.324ms',
  '      ---',
  '      at:',
  '        lineNumber: 2',
  '      ...',
  '    ',
  '    1..1',
  'not ok 1 - outer # time=32.922ms',
  '  ---',
  '  at:',
  '    lineNumber: 2',
  '  ...',
  '',
  '# Subtest: timed out',
  '    ok 1 - started',
  'not ok 2 - timed out # time=30000ms',
  '  ---',
  '  message: timeout!',
  '  ...',
  '# Subtest: fine',
  '    ok 1 - should be equal',
  '    1..1',
  'ok 3 - fine # time=0.698ms',
  '1..3',
].join('\n');

t.test('a failed assertion is named with its subtests, once, and its diagnostics without the source', async (t) => {
  const { failuresIn } = (await import(modulePath)) as TapFailures;
  const failures = failuresIn(nestedFailure);
  t.same(
    failures.map((f) => f.path),
    [['outer', 'inner', 'one is two'], ['timed out']],
  );
  t.same(failures[0]?.diagnostics, ['compare: ===', 'diff: |', '  -2', '  +1']);
  t.same(failures[1]?.diagnostics, ['message: timeout!']);
  t.same(failuresIn(nestedFailure.replaceAll('not ok', 'ok')), []);
});

t.test('the report reads only the result files of this run', async (t) => {
  const { failureReport } = (await import(modulePath)) as TapFailures;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tap-failures-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'test'));
  const old = path.join(dir, 'test', 'old.test.ts.tap');
  fs.writeFileSync(old, nestedFailure);
  const hourAgo = new Date(Date.now() - 3_600_000);
  fs.utimesSync(old, hourAgo, hourAgo);
  fs.writeFileSync(path.join(dir, 'test', 'new.test.ts.tap'), nestedFailure);
  fs.writeFileSync(
    path.join(dir, 'test', 'green.test.ts.tap'),
    '# Subtest: a\n    ok 1 - b\n    1..1\nok 1 - a\n1..1\n',
  );
  const report = failureReport(dir, Date.now() - 60_000);
  t.match(report, /^✗ test\/new\.test\.ts › outer › inner › one is two$/m);
  t.match(report, /^✗ test\/new\.test\.ts › timed out$/m);
  t.notMatch(report, /old\.test|green\.test/);
  t.equal(failureReport(path.join(dir, 'absent'), 0), '');
});
