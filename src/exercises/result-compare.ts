/**
 * Whether an answer's result is the solution's, and feedback that helps
 * without giving the solution away: which columns are missing or extra, how
 * many rows were expected and came back, the first missing and the first
 * extra row (only when the exercise allows it), and whether only the order
 * is wrong. Pure: the checker hands it two results and the exercise's rules.
 *
 * Values: NULL equals NULL; numbers are equal within the tolerance (an
 * integer and a float of the same value are equal); text equals text exactly;
 * a number never equals text; a BLOB equals a BLOB of the same bytes, never
 * text (a BLOB reaches the checker as its base64 text, so it is told apart by
 * the engine's mark, StatementResult.blobs). Rows compared as multisets (`any`) are sorted
 * by one order first, so that two orders of the same rows compare equal.
 */
import type { ResultValue, StatementResult } from '../engine/protocol';
import type { ColumnMatch, RowOrder } from './exercise-definition';

/** A BLOB's value: its bytes as base64, kept apart from a TEXT value of the same characters. */
export interface BlobValue {
  readonly blob: string;
}

/** One cell of a compared result: a value as /exec gives it, or a BLOB. */
export type CellValue = ResultValue | BlobValue;

export interface ResultSet {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly CellValue[])[];
}

/** An engine's result as the comparison reads it: each cell the engine marked as a BLOB made a BlobValue. */
export function resultSet(result: Pick<StatementResult, 'columns' | 'rows' | 'blobs'>): ResultSet {
  const width = result.columns.length;
  const rows: CellValue[][] = result.rows.map((row) => [...row]);
  for (const cell of result.blobs ?? []) {
    const row = rows[Math.floor(cell / width)];
    const value = row?.[cell % width];
    if (row !== undefined && typeof value === 'string') row[cell % width] = { blob: value };
  }
  return { columns: result.columns, rows };
}

export interface CompareRules {
  readonly order: RowOrder;
  readonly columns: ColumnMatch;
  readonly tolerance: number;
  readonly showRows: boolean;
}

export const ORDER_MATTERS = 'the rows are right but their order is not: the order matters here (ORDER BY)';

export interface Feedback {
  /** Present when the columns differ: by name, or by position (the names of the places missing or extra). */
  columns?: { missing: string[]; extra: string[] };
  rows: { expected: number; got: number };
  /** The first row of the expected result the answer lacks (only with showRows). */
  missingRow?: ResultValue[];
  /** The first row of the answer the expected result lacks (only with showRows). */
  extraRow?: ResultValue[];
  /** Only the order of the rows is wrong. */
  order?: string;
}

export interface Verdict {
  correct: boolean;
  feedback: Feedback;
}

/** A rank per kind of value, for one total order: NULL, numbers, text, BLOBs. */
function rank(value: CellValue): number {
  if (value === null) return 0;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

/** The text a value is compared by, within its rank: a BLOB's base64 is equal exactly when its bytes are. */
function textOf(value: CellValue): string {
  return typeof value === 'object' && value !== null ? value.blob : String(value);
}

function asNumber(value: CellValue): number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : Number(value);
}

/** Orders two values; 0 when they count as equal (numbers within `tolerance`). */
export function compareValues(a: CellValue, b: CellValue, tolerance: number): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a === b ? 0 : a < b ? -1 : 1;
    const x = asNumber(a);
    const y = asNumber(b);
    if (x === y || Math.abs(x - y) <= tolerance) return 0;
    return x < y ? -1 : 1;
  }
  const x = textOf(a);
  const y = textOf(b);
  return x === y ? 0 : x < y ? -1 : 1;
}

function compareRows(a: readonly CellValue[], b: readonly CellValue[], tolerance: number): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareValues(a[i] as CellValue, b[i] as CellValue, tolerance);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

/**
 * The answer's columns in the expected order (by name or by position), and
 * what is missing or extra. `mapping[i]` is the answer's column for expected
 * column i, or -1.
 */
function matchColumns(
  expected: readonly string[],
  got: readonly string[],
  by: ColumnMatch,
): { mapping: number[]; missing: string[]; extra: string[] } {
  if (by === 'position') {
    const mapping = expected.map((_, index) => (index < got.length ? index : -1));
    return {
      mapping,
      missing: expected.slice(got.length).map((name, at) => placeName(name, got.length + at)),
      extra: got.slice(expected.length),
    };
  }
  const taken = new Set<number>();
  const mapping = expected.map((name) => {
    const lower = name.toLowerCase();
    const index = got.findIndex((candidate, at) => !taken.has(at) && candidate.toLowerCase() === lower);
    if (index >= 0) taken.add(index);
    return index;
  });
  const missing = expected.filter((_, index) => mapping[index] === -1);
  const extra = got.filter((_, index) => !taken.has(index));
  return { mapping, missing, extra };
}

/**
 * An expected column as feedback names it, by position: its name when it is
 * a plain name, else its place. A solution's unnamed expression is named by
 * its text (`AVG(Milliseconds) / 60000.0`), which would give the solution away.
 */
function placeName(name: string, index: number): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `column ${index + 1}`;
}

/** The first row of each side that the other lacks, both sorted by one order. */
function firstDifferences(
  expected: CellValue[][],
  got: CellValue[][],
  tolerance: number,
): { missing?: CellValue[]; extra?: CellValue[] } {
  const sortedExpected = [...expected].sort((a, b) => compareRows(a, b, tolerance));
  const sortedGot = [...got].sort((a, b) => compareRows(a, b, tolerance));
  let missing: CellValue[] | undefined;
  let extra: CellValue[] | undefined;
  let i = 0;
  let j = 0;
  while ((missing === undefined || extra === undefined) && (i < sortedExpected.length || j < sortedGot.length)) {
    const a = sortedExpected[i];
    const b = sortedGot[j];
    const order = a === undefined ? 1 : b === undefined ? -1 : compareRows(a, b, tolerance);
    if (order === 0) {
      i++;
      j++;
    } else if (order < 0) {
      missing ??= a;
      i++;
    } else {
      extra ??= b;
      j++;
    }
  }
  return { ...(missing === undefined ? {} : { missing }), ...(extra === undefined ? {} : { extra }) };
}

/** Bigints become numbers or text for JSON, BLOBs their base64 as /exec shows them: a row quoted in feedback must serialize. */
function plain(row: readonly CellValue[]): ResultValue[] {
  return row.map((value) => {
    if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    return typeof value === 'object' && value !== null ? value.blob : value;
  });
}

export function compareResults(expected: ResultSet, got: ResultSet, rules: CompareRules): Verdict {
  const feedback: Feedback = { rows: { expected: expected.rows.length, got: got.rows.length } };
  const { mapping, missing, extra } = matchColumns(expected.columns, got.columns, rules.columns);
  const columnsRight = missing.length === 0 && extra.length === 0;
  if (!columnsRight) feedback.columns = { missing, extra };
  // Rows are compared on the columns both have, in the expected order: a missing column does not hide a missing row.
  const shared = mapping.map((at, index) => ({ at, index })).filter(({ at }) => at >= 0);
  const expectedRows = expected.rows.map((row) => shared.map(({ index }) => row[index] as CellValue));
  const gotRows = got.rows.map((row) => shared.map(({ at }) => row[at] as CellValue));
  const differences = firstDifferences(expectedRows, gotRows, rules.tolerance);
  const sameRows = differences.missing === undefined && differences.extra === undefined;
  if (rules.showRows) {
    if (differences.missing !== undefined) feedback.missingRow = plain(differences.missing);
    if (differences.extra !== undefined) feedback.extraRow = plain(differences.extra);
  }
  let inOrder = true;
  if (sameRows && rules.order === 'exact') {
    inOrder = expectedRows.every(
      (row, index) => compareRows(row, gotRows[index] as CellValue[], rules.tolerance) === 0,
    );
    if (!inOrder) feedback.order = ORDER_MATTERS;
  }
  return { correct: columnsRight && sameRows && inOrder, feedback };
}
