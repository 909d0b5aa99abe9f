/** The comparison of an answer's result with the solution's (src/exercises/result-compare.ts), on results made by hand. */
import t from 'tap';
import {
  compareResults,
  compareValues,
  ORDER_MATTERS,
  resultSet,
  type CompareRules,
} from '../src/exercises/result-compare';

const ANY: CompareRules = { order: 'any', columns: 'position', tolerance: 0, showRows: true };

t.test('values: NULLs, numbers within the tolerance, text exactly, kinds never mixed', async (t) => {
  t.equal(compareValues(null, null, 0), 0);
  t.equal(compareValues(1, 1.0, 0), 0, 'an integer and a float of the same value');
  t.equal(compareValues(1n, 1, 0), 0, 'a bigint and a number');
  t.equal(compareValues(2n ** 60n, 2n ** 60n + 1n, 0.5) !== 0, true, 'large integers compared exactly');
  t.equal(compareValues(0.1 + 0.2, 0.3, 1e-9), 0, 'float noise within the tolerance');
  t.not(compareValues(0.1 + 0.2, 0.3, 0), 0, 'a tolerance of 0 is exact');
  t.not(compareValues('1', 1, 1), 0, 'text is never a number');
  t.not(compareValues('a', 'A', 0), 0, 'text compares exactly');
  t.ok(compareValues(null, 0, 0) < 0);
});

t.test('rows as multisets, the first missing and extra rows, the order where it matters', async (t) => {
  const expected = {
    columns: ['a', 'b'],
    rows: [
      [1, 'x'],
      [2, 'y'],
      [2, 'y'],
    ],
  };
  t.same(
    compareResults(
      expected,
      {
        columns: ['p', 'q'],
        rows: [
          [2, 'y'],
          [1, 'x'],
          [2, 'y'],
        ],
      },
      ANY,
    ),
    { correct: true, feedback: { rows: { expected: 3, got: 3 } } },
  );
  t.same(
    compareResults(
      expected,
      {
        columns: ['a', 'b'],
        rows: [
          [2, 'y'],
          [1, 'x'],
        ],
      },
      ANY,
    ),
    { correct: false, feedback: { rows: { expected: 3, got: 2 }, missingRow: [2, 'y'] } },
    'a duplicate counts',
  );
  t.same(
    compareResults(
      expected,
      {
        columns: ['a', 'b'],
        rows: [
          [1, 'x'],
          [2, 'y'],
          [2, 'y'],
          [3, 'z'],
        ],
      },
      { ...ANY, showRows: false },
    ),
    { correct: false, feedback: { rows: { expected: 3, got: 4 } } },
    'no row quoted without showRows',
  );
  t.same(
    compareResults(
      expected,
      {
        columns: ['a', 'b'],
        rows: [
          [2, 'y'],
          [1, 'x'],
          [2, 'y'],
        ],
      },
      { ...ANY, order: 'exact' },
    ),
    { correct: false, feedback: { rows: { expected: 3, got: 3 }, order: ORDER_MATTERS } },
  );
  t.same(
    compareResults(
      { columns: ['n'], rows: [[9007199254740993n]] },
      { columns: ['n'], rows: [[9007199254740993n]] },
      ANY,
    ).correct,
    true,
  );
  t.same(
    compareResults({ columns: ['n'], rows: [[2n ** 70n]] }, { columns: ['n'], rows: [[1]] }, ANY).feedback.missingRow,
    [(2n ** 70n).toString()],
    'a quoted bigint serializes',
  );
});

t.test('columns by position or by name', async (t) => {
  const expected = { columns: ['Name', 'Country'], rows: [['a', 'b']] };
  t.same(
    compareResults(expected, { columns: ['country', 'name'], rows: [['b', 'a']] }, { ...ANY, columns: 'name' }).correct,
    true,
    'by name, in any order and any case',
  );
  t.same(
    compareResults(expected, { columns: ['Name'], rows: [['a']] }, ANY).feedback,
    { columns: { missing: ['Country'], extra: [] }, rows: { expected: 1, got: 1 } },
    'by position: the place missing is named by the expected name',
  );
  t.same(
    compareResults(expected, { columns: ['Name', 'City'], rows: [['a', 'b']] }, { ...ANY, columns: 'name' }).feedback
      .columns,
    { missing: ['Country'], extra: ['City'] },
  );
  t.same(
    compareResults(
      { columns: ['Name', 'AVG(Milliseconds) / 60000.0'], rows: [['a', 1]] },
      { columns: ['Name'], rows: [['a']] },
      ANY,
    ).feedback.columns,
    { missing: ['column 2'], extra: [] },
    'an unnamed expression of the solution is named by its place, never by its text',
  );
  t.same(
    compareResults(expected, { columns: ['x', 'y', 'z'], rows: [['a', 'b', 'c']] }, ANY),
    { correct: false, feedback: { columns: { missing: [], extra: ['z'] }, rows: { expected: 1, got: 1 } } },
    'the shared columns agree: only the extra one is wrong',
  );
});

t.test('a BLOB equals the BLOB of the same bytes, never the TEXT of its base64', async (t) => {
  const blob = { blob: 'yv4=' };
  t.equal(compareValues(blob, { blob: 'yv4=' }, 0), 0, 'the same bytes');
  t.not(compareValues(blob, 'yv4=', 0), 0, 'its base64 as text');
  t.not(compareValues(blob, { blob: 'yv8=' }, 0), 0, 'other bytes');
  const marked = resultSet({ columns: ['a', 'b'], rows: [['yv4=', 'yv4=']], blobs: [1] });
  t.same(marked.rows, [['yv4=', { blob: 'yv4=' }]], 'the marked cell (row × columns + column) is the BLOB');
  t.same(
    compareResults(marked, { columns: ['a', 'b'], rows: [['yv4=', 'yv4=']] }, ANY),
    {
      correct: false,
      feedback: { rows: { expected: 1, got: 1 }, missingRow: ['yv4=', 'yv4='], extraRow: ['yv4=', 'yv4='] },
    },
    'wrong, its rows quoted as /exec shows them',
  );
});
