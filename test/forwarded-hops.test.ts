import t from 'tap';
import {
  clientAddress,
  forwardedElements,
  hopAddress,
  MAX_HOPS,
  TrustedProxies,
} from '../src/http/bookkeeping/forwarded-hops';
import { parseTrustedProxies } from '../src/config/options-values';

const trust = (text: string): TrustedProxies => new TrustedProxies(parseTrustedProxies(text));
const NONE = new TrustedProxies([]);
const LOCAL = trust('127.0.0.1');

t.test('without -trust-proxy the peer stands, whatever the headers say', async (t) => {
  t.same(
    clientAddress(
      '127.0.0.1',
      { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=198.51.100.1', 'x-forwarded-proto': 'https' },
      NONE,
    ),
    { address: '127.0.0.1', proto: null },
  );
  t.same(clientAddress('::ffff:127.0.0.1', {}, NONE).address, '127.0.0.1', 'an IPv4-mapped peer is written plainly');
});

t.test('ignores the headers of a peer that is not a trusted proxy', async (t) => {
  t.same(clientAddress('127.0.0.2', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' }, LOCAL), {
    address: '127.0.0.2',
    proto: null,
  });
  t.equal(clientAddress('::1', { forwarded: 'for=203.0.113.9' }, LOCAL).address, '::1');
});

t.test('takes the right-most hop that is not a trusted proxy', async (t) => {
  t.same(clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' }, LOCAL), {
    address: '203.0.113.9',
    proto: 'https',
  });
  // The client forged the first two; the proxy appended what it saw.
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 10.0.0.5, 198.51.100.7' }, LOCAL).address,
    '198.51.100.7',
  );
  // Two trusted proxies in a row: the second's peer was the first.
  const chain = trust('127.0.0.1,10.0.0.0/8');
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 198.51.100.7, 10.0.0.5' }, chain).address,
    '198.51.100.7',
  );
  t.equal(
    clientAddress('::ffff:10.1.2.3', { 'x-forwarded-for': '198.51.100.7' }, chain).address,
    '198.51.100.7',
    'an IPv4-mapped peer matches an IPv4 network',
  );
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '10.0.0.9, 10.0.0.5' }, chain).address,
    '10.0.0.9',
    'all trusted: the left-most',
  );
});

t.test('stops at a hop that is no address, at the proxy that wrote it', async (t) => {
  const chain = trust('127.0.0.1,10.0.0.0/8');
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.9, unknown, 10.0.0.5' }, chain).address,
    '10.0.0.5',
  );
  t.equal(clientAddress('127.0.0.1', { 'x-forwarded-for': 'garbage' }, chain).address, '127.0.0.1');
  t.equal(clientAddress('127.0.0.1', { 'x-forwarded-for': '' }, chain).address, '127.0.0.1');
});

t.test('reads RFC 7239 Forwarded in preference to X-Forwarded-For', async (t) => {
  const v6 = trust('::1, 2001:db8::/32');
  t.same(
    clientAddress(
      '::1',
      {
        forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711";proto=https',
        'x-forwarded-for': '9.9.9.9',
      },
      v6,
    ),
    { address: '192.0.2.60', proto: 'https' },
    'a trusted IPv6 network is walked past',
  );
  t.equal(
    clientAddress('::1', { forwarded: 'for=192.0.2.60, for="[2001:db8:cafe::17]:4711"' }, trust('::1')).address,
    '2001:db8:cafe::17',
  );
  t.equal(clientAddress('127.0.0.1', { forwarded: 'For="192.0.2.43:47011"' }, LOCAL).address, '192.0.2.43');
  t.equal(clientAddress('127.0.0.1', { forwarded: 'for=_hidden, for=198.51.100.17' }, LOCAL).address, '198.51.100.17');
  t.equal(
    clientAddress('127.0.0.1', { forwarded: 'by=10.0.0.1' }, LOCAL).address,
    '127.0.0.1',
    'an element without for= is no address',
  );
});

t.test('parses hops and elements as proxies write them', async (t) => {
  t.equal(hopAddress(' 192.0.2.1:80 '), '192.0.2.1');
  t.equal(hopAddress('"[2001:db8::1]:4711"'), '2001:db8::1');
  t.equal(hopAddress('2001:db8::1'), '2001:db8::1');
  t.equal(hopAddress('::ffff:192.0.2.1'), '192.0.2.1');
  t.equal(hopAddress('unknown'), null);
  t.equal(hopAddress('[not-an-ip]'), null);
  t.same(forwardedElements('for="a,b";proto=HTTPS, for=x'), [
    { for: 'a,b', proto: 'https' },
    { for: 'x', proto: null },
  ]);
});

t.test('looks at no more than MAX_HOPS hops', async (t) => {
  const many = Array.from({ length: 1000 }, () => '127.0.0.1').join(', ');
  t.equal(clientAddress('127.0.0.1', { 'x-forwarded-for': `203.0.113.9, ${many}` }, LOCAL).address, '127.0.0.1');
  t.equal(MAX_HOPS, 32);
});

t.test('takes the proto the nearest proxy wrote', async (t) => {
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'http, https' }, LOCAL).proto,
    'https',
  );
  t.equal(
    clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'gopher' }, LOCAL).proto,
    null,
  );
});

t.test('takes only http or https as a Forwarded proto, and ignores any other value', async (t) => {
  for (const proto of ['javascript', '"javascript:alert(1)"', 'ftp', 'https:', 'http s', '', 'HTTPS%0a'])
    t.equal(
      clientAddress('127.0.0.1', { forwarded: `for=203.0.113.9;proto=${proto}` }, LOCAL).proto,
      null,
      `proto=${proto} is ignored`,
    );
  t.equal(
    clientAddress('127.0.0.1', { forwarded: 'for=203.0.113.9;proto="HTTPS"' }, LOCAL).proto,
    'https',
    'a quoted https, in any case, is https',
  );
  t.equal(
    clientAddress('127.0.0.1', { forwarded: 'for=203.0.113.9;proto=javascript', 'x-forwarded-proto': 'https' }, LOCAL)
      .proto,
    null,
    'an ignored Forwarded proto is not made up for by X-Forwarded-Proto',
  );
  t.same(forwardedElements('for=x;proto=javascript'), [{ for: 'x', proto: null }]);
});
