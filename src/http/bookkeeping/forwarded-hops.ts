/**
 * Who the client is behind trusted proxies (-trust-proxy): the right-most
 * hop of `Forwarded` (RFC 7239, its `for=`) or, without it,
 * `X-Forwarded-For`, that is not itself a trusted proxy. Each proxy appends
 * the address it was connected from, so everything left of the first
 * untrusted hop (counting from the right) was written by someone we do not
 * trust and may be forged; the left-most hop is never believed just for
 * being first (Koa's `app.proxy` takes `ips[0]`, which the client writes).
 *
 * Pure functions over the peer address and the headers: the middleware that
 * applies them is client-address.ts.
 */
import { BlockList, isIP } from 'node:net';
import type { ProxyRange } from '../../config/options-values';

/** The most hops looked at, from the right: a header cannot make the walk long. */
export const MAX_HOPS = 32;

/** A set of trusted proxies; `has` takes any address form a socket or a header gives (IPv4-mapped IPv6 included). */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(ranges: readonly ProxyRange[]) {
    for (const range of ranges) this.list.addSubnet(range.address, range.prefix, range.family);
    this.empty = ranges.length === 0;
  }

  has(address: string): boolean {
    const version = isIP(address);
    return version !== 0 && this.list.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }
}

/** `::ffff:127.0.0.1` (a dual-stack socket's IPv4 peer) as `127.0.0.1`; other addresses as they are. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** One hop as a header writes it (`"[2001:db8::1]:4711"`, `192.0.2.1:80`, `unknown`, `_hidden`): its address, or null. */
export function hopAddress(raw: string): string | null {
  let text = raw.trim();
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) text = text.slice(1, -1).trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed !== null) text = bracketed[1] as string;
  else if (/^[\d.]+:\d{1,5}$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  return isIP(text) === 0 ? null : plainAddress(text);
}

/** Splits on commas outside quoted strings (RFC 7239 values may be quoted). */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

/** The schemes a proxy may name: anything else it writes is ignored, never logged or believed. */
export type ForwardedProto = 'http' | 'https';

function protoValue(value: string): ForwardedProto | null {
  const lower = value.toLowerCase();
  return lower === 'http' || lower === 'https' ? lower : null;
}

/** One element of `Forwarded`, with whether it named a proto at all (a value ignored still counts as named). */
interface ForwardedElement {
  for: string;
  proto: ForwardedProto | null;
  protoNamed: boolean;
}

function parseElements(header: string): ForwardedElement[] {
  return splitOutsideQuotes(header, ',').map((element) => {
    const hop: ForwardedElement = { for: '', proto: null, protoNamed: false };
    for (const pair of splitOutsideQuotes(element, ';')) {
      const at = pair.indexOf('=');
      if (at < 0) continue;
      const name = pair.slice(0, at).trim().toLowerCase();
      const value = pair
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (name === 'for') hop.for = value;
      else if (name === 'proto') [hop.proto, hop.protoNamed] = [protoValue(value), true];
    }
    return hop;
  });
}

/**
 * The `for=` and `proto=` of each element of `Forwarded`, left to right; an
 * element without `for=` has `for: ''`. A proto is `http` or `https` (in any
 * case, quoted or not); any other value (`javascript`, `ftp`, `https:`) is
 * null, as if absent: it would reach the request log as it was written.
 */
export function forwardedElements(header: string): Array<{ for: string; proto: ForwardedProto | null }> {
  return parseElements(header).map((element) => ({ for: element.for, proto: element.proto }));
}

/** The request headers the choice reads, joined as Node joins repeated ones (with `, `). */
export interface ForwardingHeaders {
  readonly forwarded?: string | undefined;
  readonly 'x-forwarded-for'?: string | undefined;
  readonly 'x-forwarded-proto'?: string | undefined;
}

export interface ClientAddress {
  /** The client's address: the peer's, or the right-most untrusted hop behind trusted proxies. */
  readonly address: string;
  /** `https` or `http` as the nearest trusted proxy says; null when no proxy said (or none is trusted, or it named another scheme). */
  readonly proto: ForwardedProto | null;
}

/**
 * The scheme the nearest trusted proxy names: the right-most value it wrote.
 * X-Forwarded-Proto is read only when the nearest `Forwarded` element named
 * no proto: one it named and was ignored is not made up for by another header.
 */
function protoOf(headers: ForwardingHeaders, nearest: ForwardedElement | undefined): ForwardedProto | null {
  if (nearest?.protoNamed === true) return nearest.proto;
  const last = headers['x-forwarded-proto']?.split(',').at(-1)?.trim() ?? '';
  return protoValue(last);
}

/**
 * The client of a request from `peer`. Without a trusted peer the headers are
 * not read at all. A hop that is no address (`unknown`, an obfuscated name)
 * ends the walk at the trusted proxy that wrote it.
 */
export function clientAddress(peer: string, headers: ForwardingHeaders, trusted: TrustedProxies): ClientAddress {
  const plainPeer = plainAddress(peer);
  if (trusted.empty || !trusted.has(plainPeer)) return { address: plainPeer, proto: null };
  const elements = headers.forwarded === undefined ? null : parseElements(headers.forwarded);
  const hops = elements?.map((element) => element.for) ?? headers['x-forwarded-for']?.split(',') ?? [];
  const proto = protoOf(headers, elements?.at(-1));
  let client = plainPeer;
  for (const raw of hops.slice(-MAX_HOPS).reverse()) {
    const hop = hopAddress(raw);
    if (hop === null) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return { address: client, proto };
}
