/**
 * What a client sees when its request is refused below Koa, spoken over raw
 * sockets: a header Node's parser refuses gets the engine's JSON error body,
 * and a slow body gets its 408 -body-timeout after the end of the headers.
 */
import net from 'node:net';
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

interface RawAnswer {
  text: string;
  /** Milliseconds from `sentAt` to the first byte of the answer, or to the close when none came. */
  afterMs: number;
}

/** Opens a connection, sends `head`, then the body bytes one by one every `gapMs` (at most `body.length`), and reads until the server closes. */
function rawExchange(
  server: TestServer,
  head: Buffer,
  body: Buffer = Buffer.alloc(0),
  gapMs = 1000,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let sentAt = 0;
    let firstByteMs: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    socket.on('error', () => undefined); // a reset after the answer is the close, not a failure
    socket.on('data', (chunk: Buffer) => {
      firstByteMs ??= Date.now() - sentAt;
      chunks.push(chunk);
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), afterMs: firstByteMs ?? Date.now() - sentAt });
    });
    socket.once('connect', () => {
      socket.write(head, () => {
        sentAt = Date.now();
        let next = 0;
        timer = setInterval(() => {
          if (next < body.length && socket.writable) socket.write(body.subarray(next, ++next));
          else clearInterval(timer);
        }, gapMs);
      });
    });
    socket.setTimeout(20_000, () => reject(new Error('no answer within 20 s')));
  });
}

function jsonOf(text: string): { code?: number; error?: string; ok?: boolean } | undefined {
  const body = text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

const get = (headerLine: Buffer): Buffer =>
  Buffer.concat([Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\n'), headerLine, Buffer.from('\r\n')]);

t.test('a header the HTTP parser refuses gets a JSON error body', async (tt) => {
  const server = await startServer(['-dir', 'data'], { cwd: scratchDir(tt) });
  tt.teardown(() => server.stop());
  const cases: Array<[string, Buffer, RegExp]> = [
    [
      'a token ending in a carriage return',
      Buffer.from('X-Service-Token: s3cret-value\r\r\n'),
      /carriage return at the end of X-Service-Token/,
    ],
    [
      'a carriage return inside a value',
      Buffer.from('Authorization: Bearer s3cret\rvalue\r\n'),
      /carriage return inside Authorization/,
    ],
    [
      'a byte outside ASCII in a header name',
      Buffer.concat([Buffer.from('X-Caf'), Buffer.from([0xe9]), Buffer.from(': 1\r\n')]),
      /byte outside ASCII \(0xE9\) in a header name/,
    ],
    [
      'a control character in a value',
      Buffer.from('X-Note: a\x01b\r\n'),
      /control character \(0x01\) in the value of X-Note/,
    ],
  ];
  for (const [what, header, message] of cases) {
    const answer = await rawExchange(server, get(header));
    tt.match(answer.text, /^HTTP\/1\.1 400 /, `${what}: 400`);
    tt.match(answer.text, /\r\ncontent-type: application\/json/i, `${what}: a JSON body`);
    const body = jsonOf(answer.text);
    tt.equal(body?.ok, false, `${what}: ok false`);
    tt.equal(body?.code, 1060, `${what}: code 1060`);
    tt.match(body?.error, /^\[SQ1060\] /, `${what}: the code in the message`);
    tt.match(body?.error, message, `${what}: the message says what and where`);
    tt.notMatch(answer.text, /s3cret/, `${what}: the value is not repeated`);
  }
  const garbled = await rawExchange(server, Buffer.from('GET /health HTTP/1.1 extra\r\nHost: localhost\r\n\r\n'));
  tt.equal(jsonOf(garbled.text)?.code, 1061, 'another parse error: 400 [SQ1061] with a JSON body');
  tt.equal((await server.get('/health')).status, 200, 'the server still serves');
});

t.test('-body-timeout counts from the end of the headers', async (tt) => {
  const server = await startServer(['-dir', 'data', '-body-timeout', '3s'], { cwd: scratchDir(tt) });
  tt.teardown(() => server.stop());
  const body = Buffer.from('{"sql":"SELECT 1","pad":"xxxxxxxxxxxxxxxx"}');
  const head = Buffer.from(
    `POST /exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  const answer = await rawExchange(server, head, body, 1000);
  tt.ok(
    answer.afterMs <= 4000,
    `a byte a second: answered or closed ${answer.afterMs} ms after the headers (at most 4000)`,
  );
  tt.match(answer.text, /^HTTP\/1\.1 408 /, '408');
  tt.equal(jsonOf(answer.text)?.code, 1062, 'with the JSON body of [SQ1062]');
  tt.equal((await server.get('/health')).status, 200, 'the server still serves');
});

t.test("the answers Node's parser gives itself (431, 413, 408) carry the JSON error body too", async (tt) => {
  const server = await startServer(['-dir', 'data', '-header-timeout', '1s'], { cwd: scratchDir(tt) });
  tt.teardown(() => server.stop());
  const expect = (what: string, answer: RawAnswer, status: number, code: number, message: RegExp): void => {
    tt.match(answer.text, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${status}`);
    tt.match(answer.text, /\r\ncontent-type: application\/json/i, `${what}: a JSON body`);
    tt.match(answer.text, /\r\nconnection: close/i, `${what}: the connection closes`);
    const body = jsonOf(answer.text);
    tt.equal(body?.ok, false, `${what}: ok false`);
    tt.equal(body?.code, code, `${what}: code ${code}`);
    tt.match(body?.error, new RegExp(`^\\[SQ${code}\\] `), `${what}: the code in the message`);
    tt.match(body?.error, message, `${what}: says what`);
    tt.notMatch(answer.text, /s3cret/, `${what}: no header value is repeated`);
  };
  const big = await rawExchange(server, get(Buffer.from(`X-Pad: s3cret${'x'.repeat(20_000)}\r\n`)));
  expect('20 KB of headers', big, 431, 1092, /headers are too large: at most 16384 bytes/);

  const extension = `1;ext=${'e'.repeat(20_000)}\r\nx\r\n0\r\n\r\n`;
  const chunked = await rawExchange(
    server,
    Buffer.from(
      `POST /exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${extension}`,
    ),
  );
  expect('20 KB of chunk extensions', chunked, 413, 1093, /chunk extensions/);

  const slow = await rawExchange(server, Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Half: s3cret'));
  expect('headers that never end', slow, 408, 1094, /within 1000 ms \(-header-timeout\)/);
  tt.equal((await server.get('/health')).status, 200, 'the server still serves');
});
