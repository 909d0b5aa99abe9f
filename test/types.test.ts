import t from 'tap';
import { boolCheckSql, canonicalType, quoteIdentifier, reportedType, storageType } from '../src/engine/types';
import { checkNamedParameters, convertRow, toBindParameters, toResultValue } from '../src/engine/values';
import { stringifyJson } from '../src/json-text';

t.test('maps every accepted alias to its canonical type', async (t) => {
  const cases: Array<[string, string]> = [
    ['INT', 'INT'],
    ['integer', 'INT'],
    ['BIGINT', 'INT'],
    ['SmallInt', 'INT'],
    ['REAL', 'FLOAT'],
    ['DOUBLE', 'FLOAT'],
    ['double  precision', 'FLOAT'],
    ['NUMERIC', 'FLOAT'],
    ['DECIMAL(10, 2)', 'FLOAT'],
    ['FLOAT', 'FLOAT'],
    ['TEXT', 'TEXT'],
    ['VARCHAR(20)', 'TEXT'],
    ['CHAR(2)', 'TEXT'],
    ['CHARACTER VARYING(30)', 'TEXT'],
    ['STRING', 'TEXT'],
    ['BOOL', 'BOOL'],
    ['boolean', 'BOOL'],
    ['NVARCHAR(160)', 'TEXT'],
    ['nchar(5)', 'TEXT'],
    ['NATIVE CHARACTER(70)', 'TEXT'],
    ['CLOB', 'TEXT'],
    ['TINYINT', 'INT'],
    ['MEDIUMINT', 'INT'],
    ['INT2', 'INT'],
    ['INT8', 'INT'],
    ['unsigned big int', 'INT'],
    ['DATETIME', 'TEXT'],
    ['DATE', 'TEXT'],
    ['TIME', 'TEXT'],
    ['TIMESTAMP', 'TEXT'],
    ['NUMERIC(10,2)', 'FLOAT'],
    ['BLOB', 'BLOB'],
  ];
  for (const [declared, canonical] of cases) t.equal(canonicalType(declared), canonical, declared);
});

t.test('rejects other type names and sizes where SQL allows none', async (t) => {
  for (const declared of ['INT(5)', 'BLOB(3)', 'DATETIME(6)', 'TEXT(10)', 'VARCHAR(', 'ANY', '', 'BOOL BOOL'])
    t.equal(canonicalType(declared), undefined, declared);
});

t.test('stores each type under a name STRICT tables accept', async (t) => {
  t.equal(storageType('INT'), 'INTEGER');
  t.equal(storageType('BOOL'), 'INTEGER');
  t.equal(storageType('FLOAT'), 'REAL');
  t.equal(storageType('TEXT'), 'TEXT');
  t.equal(storageType('BLOB'), 'BLOB');
  t.equal(boolCheckSql(quoteIdentifier('a"b')), 'CHECK (("a""b") IN (0, 1))');
});

t.test('reports storage names, and the affinity of a table that is not STRICT', async (t) => {
  t.equal(reportedType('INTEGER', false, true), 'INT');
  t.equal(reportedType('INTEGER', true, true), 'BOOL');
  t.equal(reportedType('REAL', false, true), 'FLOAT');
  t.equal(reportedType('ANY', false, true), 'BLOB', 'ANY keeps values as given, as BLOB affinity does');
  t.equal(reportedType('datetime', false, false), 'NUMERIC', "DATETIME's affinity is NUMERIC");
  t.equal(reportedType('NVARCHAR(160)', false, false), 'TEXT');
  t.equal(reportedType('BOOLEAN', true, false), 'BOOL');
  t.equal(reportedType('GEOMETRY', false, false), 'NUMERIC', 'a type of ours it is not: its affinity');
  t.equal(reportedType('', false, false), 'BLOB', 'no type at all');
});

t.test('binds JSON integers as 64-bit integers and booleans as 0/1', async (t) => {
  t.same(toBindParameters([5, 1.5, 'x', null, true, false]), [5n, 1.5, 'x', null, 1n, 0n]);
  t.same(toBindParameters({ ':a': 1, b: 'x' }), [{ a: 1n, b: 'x' }]);
  t.throws(() => toBindParameters({ ':a': 1, a: 2 }), { code: 1007 }, 'the same name twice');
  t.throws(() => toBindParameters([Number.POSITIVE_INFINITY]), { code: 1007 });
});

t.test('refuses a named parameter the statement does not have', async (t) => {
  t.doesNotThrow(() => checkNamedParameters('SELECT :a, @b, $c', { a: 1, '@b': 2, c: 3 }));
  t.throws(() => checkNamedParameters('SELECT :a', { a: 1, b: 2 }), { code: 1007 });
  t.doesNotThrow(() => checkNamedParameters('SELECT ?', [1]), 'positional parameters are counted by the driver');
});

t.test('reads values back exactly: integers, booleans, blobs', async (t) => {
  t.equal(toResultValue(42n, false), 42);
  t.equal(toResultValue(9223372036854775807n, false), 9223372036854775807n, 'beyond 2^53 stays exact');
  t.equal(toResultValue(1n, true), true);
  t.equal(toResultValue(0n, true), false);
  t.equal(toResultValue(2n, true), 2, 'not 0 or 1: a number even in a BOOL column');
  t.equal(toResultValue(Buffer.from([1, 2]), false), 'AQI=');
  t.same(convertRow([1n, 0n, 'x', null, 1.5], [false, true, false, false, false]), [1, false, 'x', null, 1.5]);
});

t.test('writes 64-bit integers into JSON with all their digits', async (t) => {
  t.equal(
    stringifyJson({ rows: [[9223372036854775807n, -9223372036854775808n, 1, 'a"b']] }),
    '{"rows":[[9223372036854775807,-9223372036854775808,1,"a\\"b"]]}',
  );
  t.equal(stringifyJson({ a: 1, b: undefined, c: [undefined] }), '{"a":1,"c":[null]}');
  t.equal(stringifyJson({ big: 1n, skipped: undefined }), '{"big":1}');
});
