/**
 * JSON out in parts: rows written as chunks by the engine (json-row-chunks.ts)
 * concatenate to exactly the JSON of the rows, and a response that splices
 * them (json.ts jsonParts) is the same text as one written whole, 64-bit
 * integers exact.
 */
import t from 'tap';
import { JsonRowChunks } from '../src/engine/rows/json-row-chunks';
import { convertRowWeighed } from '../src/engine/values';
import { jsonParts, RawJson, stringifyJson } from '../src/json-text';

t.test('row chunks concatenate to the JSON of the rows', async (t) => {
  const empty = new JsonRowChunks();
  t.ok(empty.empty);
  t.same(empty.done(), ['[]']);
  const rows = Array.from({ length: 3000 }, (_, i) => [
    i,
    'ü😀'.repeat(i % 200),
    i % 7 === 0 ? null : 2n ** 60n + BigInt(i),
  ]);
  const chunks = new JsonRowChunks();
  for (const row of rows) chunks.add(row, convertRowWeighed([...row], []));
  const parts = chunks.done();
  t.ok(parts.length > 2, `${parts.length} chunks`);
  t.equal(parts.join(''), stringifyJson(rows), 'same text as the rows written whole');
  t.ok(parts.join('').includes(',1152921504606846977]'), 'a 64-bit integer stays exact');
});

t.test('a response keeps long spliced texts as parts of their own, and short ones inline', async (t) => {
  const long = 'x'.repeat(100_000);
  const body = {
    ok: true,
    results: [
      { columns: ['a'], rows: new RawJson([`["${long}"`, ',[1]]']) },
      { rows: new RawJson('[[2]]'), n: 2n ** 63n - 1n },
    ],
  };
  const parts = jsonParts(body);
  t.equal(parts.length, 3, 'the long chunk is a part of its own');
  t.equal(parts[1], `["${long}"`);
  const text = parts.join('');
  t.equal(
    text,
    `{"ok":true,"results":[{"columns":["a"],"rows":["${long}",[1]]},{"rows":[[2]],"n":9223372036854775807}]}`,
  );
  t.same(jsonParts({ a: 1 }), ['{"a":1}'], 'plain values take the native path, in one part');
});

t.test(
  'integers at the edge of 2^53 become numbers only while exact; a block holding a bigint is still written exactly',
  async (t) => {
    const row: unknown[] = [
      2n ** 53n - 1n,
      2n ** 53n,
      -(2n ** 53n) + 1n,
      -(2n ** 53n),
      1n,
      Buffer.from('hi'),
      'ab',
      null,
      0.5,
    ];
    const weight = convertRowWeighed(row, [false, false, false, false, true]);
    t.same(
      row.map((value) => typeof value),
      ['number', 'bigint', 'number', 'bigint', 'boolean', 'string', 'string', 'object', 'number'],
    );
    t.equal(
      weight,
      2 + 7 * 21 + (4 + 3) + (2 + 3),
      'numbers, booleans and null weigh 21, text its length and 3, a blob its base64',
    );
    const chunks = new JsonRowChunks();
    chunks.add(row as never, weight);
    t.same(chunks.done(), [
      '[[9007199254740991,9007199254740992,-9007199254740991,-9007199254740992,true,"aGk=","ab",null,0.5]]',
    ]);
  },
);

t.test(
  'spliced texts keep their places among the keys, and a client text that looks like a splice stays text',
  async (t) => {
    const body = {
      ok: true,
      db: 'raw-json-0',
      results: [
        { columns: ['"raw-json-0"', 'b'], types: ['TEXT', null], rows: new RawJson('[["x",1]]'), message: 'SELECT 1' },
        { columns: [], rows: new RawJson(['[', '[2]', ']']), changes: 0 },
      ],
    };
    const expected =
      '{"ok":true,"db":"raw-json-0","results":[{"columns":["\\"raw-json-0\\"","b"],"types":["TEXT",null],"rows":[["x",1]],"message":"SELECT 1"},{"columns":[],"rows":[[2]],"changes":0}]}';
    t.equal(jsonParts(body).join(''), expected, 'the text, rows where they were');
    t.same(JSON.parse(jsonParts(body).join('')), JSON.parse(expected), 'and JSON that parses back');
    const nested = { toJSON: () => 'replaced', raw: new RawJson('[1]') };
    t.equal(jsonParts({ a: nested }).join(''), '{"a":"replaced"}', 'a RawJson a toJSON above it left out is left out');
  },
);
