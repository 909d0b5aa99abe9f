/**
 * The frames between the server and an engine process (engine-channel.ts):
 * every value the structured clone carried comes back as it was, long strings
 * travel as bytes beside the header, and a pipe's pieces of any size make the
 * same messages.
 */
import t from 'tap';
import { encodeFrame, FrameReader } from '../src/engine/host/engine-channel';

function roundTrip(message: unknown): unknown {
  const out: unknown[] = [];
  new FrameReader((value) => out.push(value)).push(encodeFrame(message));
  return out.length === 1 ? out[0] : out;
}

t.test('plain data, bigint, Buffers, non-finite numbers, -0 and left-out arguments come back as they were', async (t) => {
  const big = 2n ** 63n - 1n;
  const message = {
    id: 7,
    method: 'createDatabase',
    args: ['/d/a.db', undefined, null, big, -big, Buffer.from([0, 1, 254, 255]), Number.NaN, Infinity, -Infinity, -0, 0.1, true, 'é😀'],
  };
  const back = roundTrip(message) as typeof message;
  t.equal(back.id, 7);
  t.equal(back.args.length, message.args.length, 'the array keeps its length');
  t.equal(back.args[1], undefined, 'an argument left out stays undefined, not null');
  t.equal(back.args[2], null);
  t.equal(back.args[3], big, 'a 64-bit integer stays a bigint, exact');
  t.equal(back.args[4], -big);
  t.ok(Buffer.isBuffer(back.args[5]), 'a Buffer comes back a Buffer');
  t.same([...(back.args[5] as Buffer)], [0, 1, 254, 255]);
  t.ok(Number.isNaN(back.args[6]));
  t.equal(back.args[7], Infinity);
  t.equal(back.args[8], -Infinity);
  t.ok(Object.is(back.args[9], -0), '-0 stays -0');
  t.equal(back.args[10], 0.1);
  t.equal(back.args[12], 'é😀');
});

t.test('an object that owns the tag key is data, not a tag', async (t) => {
  const params = { '\u0000': 's', o: 0, n: 3, nested: { '\u0000': 'b', v: '1' } };
  t.same(roundTrip({ params }), { params }, 'returned as sent');
  const proto = JSON.parse('{"__proto__": 1, "\\u0000": "u"}') as Record<string, unknown>;
  const back = roundTrip(proto) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(back), Object.prototype, 'a key named __proto__ stays an own key');
  t.ok(Object.hasOwn(back, '__proto__'));
  t.equal(back['\u0000'], 'u');
});

t.test('long strings travel as bytes beside the header, not escaped into it', async (t) => {
  const rows = `[${Array.from({ length: 500 }, (_, i) => `[${i},"name \\"${i}\\" é😀",${i * 0.25}]`).join(',')}]`;
  const message = { id: 3, kind: 'result', value: [{ columns: ['a', 'b', 'c'], rows: [], rowsJson: [rows, ']'] }] };
  const frame = encodeFrame(message);
  const headerBytes = frame.readUInt32LE(4) & 0x7fffffff;
  t.ok(headerBytes < 200, 'the header stays small');
  t.ok(frame.subarray(8 + headerBytes).toString('utf8').startsWith(rows), 'the rows follow it as their own UTF-8 bytes');
  t.same(roundTrip(message), message);
});

t.test('pieces of any size make the same messages, in order', async (t) => {
  const messages = [{ id: 0, kind: 'ready' }, { id: 1, kind: 'result', value: 'x'.repeat(5000) + 'é' }, { id: 2, kind: 'error', error: { name: 'QUERY_TIMEOUT', params: { ms: 5 } } }, null];
  const bytes = Buffer.concat(messages.map((message) => encodeFrame(message)));
  for (const size of [1, 3, 8, 100, bytes.length]) {
    const out: unknown[] = [];
    const reader = new FrameReader((value) => out.push(value));
    for (let at = 0; at < bytes.length; at += size) reader.push(bytes.subarray(at, at + size));
    t.same(out, messages, `in pieces of ${size} bytes`);
  }
});

t.test('a frame whose string runs past its end is refused', async (t) => {
  const frame = encodeFrame({ text: 'y'.repeat(2000) });
  frame.writeUInt32LE(frame.readUInt32LE(0) - 10, 0);
  t.throws(() => new FrameReader(() => undefined).push(frame.subarray(0, frame.length - 10)), /runs past its frame/);
});
