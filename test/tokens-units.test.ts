/**
 * The pure parts of personal tokens: database patterns, the POST /tokens
 * body, the -tokens-file format, the registry (expiry on an injected clock,
 * revocation, what it keeps on disk) and the CSV cards.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ADMIN_PRINCIPAL, hasRole, matchesPattern, mayTouch, type Principal } from '../src/access/principal';
import { hashSecret, newSecret } from '../src/access/token-secret';
import { parseTokensFile } from '../src/config/tokens-file';
import { EngineError } from '../src/errors';
import { OptionsError } from '../src/config/options-values';
import { tokensCsv } from '../src/routes/token-routes';
import { TokenRegistry } from '../src/tokens/token-registry';
import { readTokenRequest } from '../src/tokens/token-request';
import { TokenStateFile } from '../src/tokens/token-state';
import type { Clock } from '../src/clock';
import { scratchDir } from './helpers/scratch-dir';

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'no error';
  } catch (error) {
    if (error instanceof EngineError) return error.errorName;
    if (error instanceof OptionsError) return `OptionsError: ${error.message}`;
    throw error;
  }
}

class FakeClock implements Clock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
  after(): { cancel(): void } {
    return { cancel: () => undefined };
  }
}

t.test('patterns: a name, or a glob where only * is special', async (t) => {
  t.ok(matchesPattern('alumno-07', 'alumno-07.db'));
  t.notOk(matchesPattern('alumno-07', 'alumno-070.db'), 'a name matches only itself');
  t.ok(matchesPattern('clase-*', 'clase-3b.db'));
  t.ok(matchesPattern('clase-*', 'clase-'), '* matches nothing too');
  t.notOk(matchesPattern('clase-*', 'otra-clase-1.db'));
  t.ok(matchesPattern('*-7a-*', 'x-7a-y'));
  t.notOk(matchesPattern('a*a', 'a'), 'the two ends do not overlap');
  t.ok(matchesPattern('*', 'anything'));
  t.notOk(matchesPattern('clase_?', 'clase_1'), '? is a literal character (and not a valid one)');
  const student: Principal = { id: 'x', name: 'x', role: 'write', databases: ['alumno-07'] };
  t.ok(mayTouch(student, 'alumno-07.db'));
  t.notOk(mayTouch(student, 'alumno-08.db'));
  t.ok(mayTouch(ADMIN_PRINCIPAL, 'anything.db'), 'an admin touches every database');
  t.ok(
    hasRole(student, 'read') && hasRole(student, 'write') && !hasRole(student, 'admin'),
    'roles are ordered read < write < admin',
  );
});

t.test('the POST /tokens body', async (t) => {
  const now = Date.parse('2026-05-01T00:00:00Z');
  const one = readTokenRequest({ name: 'Ana', role: 'read', databases: ['Alumno-07.db', 'clase-*'] }, now);
  t.same(
    one.specs,
    [{ name: 'Ana', role: 'read', databases: ['alumno-07', 'clase-*'], expiresMs: null }],
    'one token, its patterns normalized',
  );
  t.same(
    readTokenRequest({ name: 'boss', role: 'admin' }, now).specs[0]?.databases,
    ['*'],
    'an admin needs no databases',
  );
  const nine = readTokenRequest({ prefix: 'c', count: 9, role: 'write', expires: '2026-07-01T00:00:00Z' }, now);
  t.same(
    nine.specs.map((s) => s.name),
    ['c-01', 'c-02', 'c-03', 'c-04', 'c-05', 'c-06', 'c-07', 'c-08', 'c-09'],
    'zero-padded to two digits',
  );
  t.same(nine.specs[0]?.databases, ['c-01'], 'each bound to its own database');
  t.equal(nine.specs[0]?.expiresMs, Date.parse('2026-07-01T00:00:00Z'));
  const big = readTokenRequest({ prefix: 'c', count: 500, role: 'read' }, now).specs;
  t.same([big[0]?.name, big[499]?.name], ['c-001', 'c-500'], 'three digits for 500');
  t.equal(
    codeOf(() => readTokenRequest({ prefix: 'c', count: 501, role: 'read' }, now)),
    'TOKEN_CLASS_TOO_LARGE',
  );
  t.equal(
    codeOf(() => readTokenRequest({ prefix: 'c', count: 0, role: 'read' }, now)),
    'TOKEN_CLASS_TOO_LARGE',
  );
  t.equal(
    codeOf(() => readTokenRequest({ prefix: 'c', count: 2.5, role: 'read' }, now)),
    'TOKEN_CLASS_TOO_LARGE',
  );
  for (const bad of [
    null,
    [],
    { name: 'a', role: 'root', databases: ['x'] },
    { name: 'a b', role: 'read', databases: ['x'] },
    { name: 'a', role: 'read' },
    { name: 'a', role: 'read', databases: ['../x'] },
    { name: 'a', role: 'read', databases: ['x'], expires: '2020-01-01T00:00:00Z' },
    { name: 'a', role: 'read', databases: ['x'], expires: 'soon' },
    { name: 'a', role: 'read', databases: ['x'], secret: 'mine' },
    { prefix: '_sqlscribe', count: 2, role: 'read' },
    { prefix: 'a*', count: 2, role: 'read' },
  ]) {
    t.equal(
      codeOf(() => readTokenRequest(bad, now)),
      'TOKEN_REQUEST_INVALID',
      JSON.stringify(bad),
    );
  }
});

t.test('the -tokens-file format', async (t) => {
  const hash = hashSecret('sqs_example');
  const parsed = parseTokensFile(
    JSON.stringify({
      tokens: [
        { name: 'teacher', role: 'admin', hash },
        { name: 'ana', role: 'read', databases: ['clase-*'], hash, expires: '2027-01-01T00:00:00Z' },
      ],
    }),
    'f.json',
  );
  t.same(
    parsed.map((token) => [token.id, token.role, token.databases, token.expiresMs]),
    [
      ['file:teacher', 'admin', ['*'], null],
      ['file:ana', 'read', ['clase-*'], Date.parse('2027-01-01T00:00:00Z')],
    ],
  );
  const bad: Array<[string, RegExp]> = [
    ['{', /not valid JSON/],
    ['{"tokens": {}}', /"tokens" array/],
    [
      JSON.stringify({ tokens: [{ name: 'a', role: 'read', databases: ['x'], hash: 'sqs_the-secret-itself' }] }),
      /"hash" must be/,
    ],
    [JSON.stringify({ tokens: [{ name: 'a', role: 'owner', databases: ['x'], hash }] }), /"role"/],
    [JSON.stringify({ tokens: [{ name: 'a', role: 'read', hash }] }), /"databases"/],
    [
      JSON.stringify({ tokens: [{ name: 'a', role: 'read', databases: ['x'], hash, secret: 'x' }] }),
      /unknown field "secret"/,
    ],
    [
      JSON.stringify({ tokens: [{ name: 'a', role: 'read', databases: ['x'], hash, expires: 'tomorrow' }] }),
      /"expires"/,
    ],
    [
      JSON.stringify({
        tokens: [
          { name: 'a', role: 'read', databases: ['x'], hash },
          { name: 'a', role: 'read', databases: ['x'], hash },
        ],
      }),
      /used twice/,
    ],
  ];
  for (const [text, pattern] of bad) {
    const message = codeOf(() => parseTokensFile(text, 'f.json'));
    t.match(message, /^OptionsError: f\.json: /, `names the file: ${message}`);
    t.match(message, pattern);
    t.notMatch(message, /\n/, 'one line');
  }
});

t.test('the registry: secrets, revocation, expiry on an injected clock, hashes only on disk', async (t) => {
  const dir = scratchDir(t);
  const clock = new FakeClock(Date.parse('2026-05-01T00:00:00Z'));
  const fileSecret = newSecret();
  const fileTokens = parseTokensFile(
    JSON.stringify({ tokens: [{ name: 'teacher', role: 'admin', hash: hashSecret(fileSecret) }] }),
    'f',
  );
  const registry = new TokenRegistry({ adminToken: 'adm', fileTokens, state: TokenStateFile.in(dir), clock });
  t.equal(registry.authenticate('adm')?.id, 'admin', 'the -token secret is the admin');
  t.equal(registry.authenticate(fileSecret)?.name, 'teacher', 'a -tokens-file secret');
  t.equal(registry.authenticate('adm2'), null);
  const [made, soon] = registry.create([
    { name: 'ana', role: 'write', databases: ['ana'], expiresMs: null },
    { name: 'soon', role: 'read', databases: ['ana'], expiresMs: clock.ms + 60_000 },
  ]);
  t.match(made?.secret, /^sqs_[A-Za-z0-9_-]{43}$/, 'a secret of 32 random bytes');
  t.equal(registry.authenticate(made!.secret)?.name, 'ana');
  t.equal(registry.authenticate(made!.secret)?.name, 'ana', 'again (remembered)');
  t.equal(registry.authenticate(soon!.secret)?.name, 'soon', 'before its expiry');
  clock.ms += 60_000;
  t.equal(registry.authenticate(soon!.secret), null, 'at its expiry: refused');
  t.equal(
    codeOf(() => registry.create([{ name: 'ANA', role: 'read', databases: ['x'], expiresMs: null }])),
    'TOKEN_NAME_EXISTS',
    'names are unique regardless of case',
  );
  t.equal(
    codeOf(() => registry.create([{ name: 'Admin', role: 'read', databases: ['x'], expiresMs: null }])),
    'TOKEN_NAME_EXISTS',
    '"admin" names the -token holder',
  );
  t.equal(
    codeOf(() =>
      registry.create([
        { name: 'twice', role: 'read', databases: ['x'], expiresMs: null },
        { name: 'TWICE', role: 'read', databases: ['x'], expiresMs: null },
      ]),
    ),
    'TOKEN_NAME_EXISTS',
    'a name given twice',
  );
  t.equal(
    codeOf(() => registry.revoke('file:teacher')),
    'TOKEN_IN_FILE',
  );
  t.equal(
    codeOf(() => registry.revoke('tok_nothing')),
    'TOKEN_NOT_FOUND',
  );
  registry.revoke(made!.id);
  t.equal(registry.authenticate(made!.secret), null, 'revoked: refused at once, although its secret was seen before');

  const stored = fs.readFileSync(path.join(dir, '_sqlscribe_tokens.json'), 'utf8');
  t.notOk(stored.includes(made!.secret) || stored.includes(soon!.secret), 'the state file holds no secret');
  t.ok(stored.includes(hashSecret(soon!.secret)), 'but the hash of the live one');
  t.notOk(stored.includes(hashSecret(made!.secret)), 'and not the revoked one');
  t.notOk(stored.includes(fileTokens[0]!.hash), 'tokens of the file stay in the file');
  const again = new TokenRegistry({
    adminToken: null,
    fileTokens: [],
    state: TokenStateFile.in(dir),
    clock: new FakeClock(Date.parse('2026-05-01T00:00:00Z')),
  });
  t.equal(again.authenticate(soon!.secret)?.name, 'soon', 'a restart reads the tokens back');
  t.equal(again.authenticate(made!.secret), null, 'without the revoked one');
  t.notOk(JSON.stringify(again.list()).includes('sha256'), 'the list shows no hash');
});

t.test('the registry is off without -token and -tokens-file', async (t) => {
  t.notOk(new TokenRegistry({ adminToken: null, fileTokens: null, state: null }).enabled);
  t.ok(
    new TokenRegistry({ adminToken: null, fileTokens: [], state: null }).enabled,
    'an empty -tokens-file still requires tokens',
  );
});

// LF line ends (not CRLF): a secret cut from a line with grep and cut must not end in a CR.
t.test('CSV cards', async (t) => {
  const token = { id: 'i', role: 'read', created: null, expires: null, source: 'api' } as const;
  t.equal(
    tokensCsv([
      { ...token, name: 'c-01', databases: ['c-01'], secret: 'sqs_a' },
      { ...token, name: 'x,"y"', databases: ['a', 'b'], secret: 'sqs_b' },
    ]),
    'name,database,secret\nc-01,c-01,sqs_a\n"x,""y""",a b,sqs_b\n',
  );
});
