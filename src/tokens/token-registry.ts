/**
 * Every token the server knows — the -token admin token, the tokens of
 * -tokens-file, and those made through POST /tokens — and the one question
 * each request asks: whose secret is this?
 *
 * Per request the check is cheap: a secret seen before is found in a map
 * from secret to token id (no hashing); a new one is hashed once and looked
 * up by its hash. The map holds only secrets of live tokens: a revoked
 * token's are removed with it, so the very next request is refused. The
 * admin token is compared in constant time, as before.
 */
import { timingSafeEqual } from 'node:crypto';
import { EngineError } from '../errors';
import { systemClock, type Clock } from '../clock';
import { ADMIN_PRINCIPAL, type Principal, type AccessRole } from '../access/principal';
import type { FileToken } from '../config/tokens-file';
import { hashSecret, newSecret, newTokenId } from '../access/token-secret';
import type { StoredToken, TokenStateFile } from './token-state';
import { TokenExpiry } from './token-expiry';

/** What GET /tokens shows of a token: never its secret or hash. */
export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly role: AccessRole;
  readonly databases: readonly string[];
  readonly created: string | null;
  readonly expires: string | null;
  /** The token's own database size limit in MiB (in place of -max-database-mb); absent: the flag's. */
  readonly maxDatabaseMb?: number;
  /** `api`: made by POST /tokens (revocable); `file`: from -tokens-file. */
  readonly source: 'api' | 'file';
}

/** A token to make. */
export interface TokenSpec {
  readonly name: string;
  readonly role: AccessRole;
  readonly databases: readonly string[];
  readonly expiresMs: number | null;
  readonly maxDatabaseMb?: number;
}

export interface CreatedToken extends TokenView {
  /** Shown once, in the answer to POST /tokens; the server keeps only its hash. */
  readonly secret: string;
}

interface KnownToken {
  readonly principal: Principal;
  readonly hash: string;
  readonly expiresMs: number | null;
  readonly view: TokenView;
  readonly stored: StoredToken | null;
}

/** Secrets remembered at most; beyond, the map starts over (a secret seen again is hashed once more). */
const MAX_SEEN = 10_000;

export interface TokenRegistryOptions {
  readonly adminToken: string | null;
  readonly fileTokens: readonly FileToken[] | null;
  /** Where tokens made through the API are kept; null keeps them in memory only (tests). */
  readonly state: TokenStateFile | null;
  readonly clock?: Clock;
}

export class TokenRegistry {
  private readonly byId = new Map<string, KnownToken>();
  private readonly byHash = new Map<string, KnownToken>();
  private readonly seen = new Map<string, string>();
  private readonly adminSecret: Buffer | null;
  private readonly clock: Clock;
  private expiry: TokenExpiry | null = null;

  constructor(private readonly options: TokenRegistryOptions) {
    this.adminSecret = options.adminToken === null ? null : Buffer.from(options.adminToken, 'utf8');
    this.clock = options.clock ?? systemClock;
    for (const token of options.fileTokens ?? []) this.add(fromFile(token));
    for (const token of options.state?.load() ?? []) this.add(fromState(token));
  }

  /** Whether requests must carry a token at all. */
  get enabled(): boolean {
    return this.adminSecret !== null || this.options.fileTokens !== null;
  }

  /** The principal whose secret this is, or null (unknown, revoked or expired). */
  authenticate(secret: string): Principal | null {
    if (this.adminSecret !== null && isSecret(secret, this.adminSecret)) return ADMIN_PRINCIPAL;
    const known = this.lookup(secret);
    if (known === undefined) return null;
    if (known.expiresMs !== null && known.expiresMs <= this.clock.now()) return null;
    return known.principal;
  }

  list(): TokenView[] {
    return [...this.byId.values()].map((known) => known.view).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Refuses names already taken (regardless of case), or given twice. `admin`
   * is the -token holder's name in the journal, so no other token takes it.
   */
  checkNames(specs: readonly TokenSpec[]): void {
    const names = new Set(['admin', ...[...this.byId.values()].map((known) => known.view.name.toLowerCase())]);
    for (const spec of specs) {
      if (names.has(spec.name.toLowerCase())) throw new EngineError('TOKEN_NAME_EXISTS', { name: spec.name });
      names.add(spec.name.toLowerCase());
    }
  }

  /** Makes the tokens, all or none, and keeps their hashes before answering. */
  create(specs: readonly TokenSpec[]): CreatedToken[] {
    this.checkNames(specs);
    const created = this.clock.now();
    const made = specs.map((spec) => {
      const secret = newSecret();
      const stored: StoredToken = {
        id: newTokenId(),
        name: spec.name,
        role: spec.role,
        databases: [...spec.databases],
        hash: hashSecret(secret),
        created: new Date(created).toISOString(),
        expires: spec.expiresMs === null ? null : new Date(spec.expiresMs).toISOString(),
        ...(spec.maxDatabaseMb === undefined ? {} : { maxDatabaseMb: spec.maxDatabaseMb }),
      };
      return { stored, secret };
    });
    this.options.state?.save([...this.storedTokens(), ...made.map((m) => m.stored)]);
    const tokens = made.map(({ stored, secret }) => {
      const known = fromState(stored);
      this.add(known);
      return { ...known.view, secret };
    });
    this.watchExpiries();
    return tokens;
  }

  /**
   * Tells `expired` of each token at the moment it expires (and at once of one expired already):
   * what it holds across requests is ended the way a revocation ends it.
   */
  onExpired(expired: (id: string) => void): void {
    this.expiry?.stop();
    this.expiry = new TokenExpiry(this.clock, expired);
    this.watchExpiries();
  }

  private watchExpiries(): void {
    const expiries = new Map<string, number>();
    for (const [id, known] of this.byId) if (known.expiresMs !== null) expiries.set(id, known.expiresMs);
    this.expiry?.watch(expiries);
  }

  /** Revokes at once: the next request with its secret is refused. */
  revoke(id: string): TokenView {
    const known = this.byId.get(id);
    if (known === undefined) throw new EngineError('TOKEN_NOT_FOUND', { id });
    if (known.stored === null) throw new EngineError('TOKEN_IN_FILE', { id });
    this.options.state?.save(this.storedTokens().filter((token) => token.id !== id));
    this.byId.delete(id);
    this.byHash.delete(known.hash);
    for (const [secret, seenId] of this.seen) if (seenId === id) this.seen.delete(secret);
    this.watchExpiries();
    return known.view;
  }

  private lookup(secret: string): KnownToken | undefined {
    const id = this.seen.get(secret);
    if (id !== undefined) return this.byId.get(id);
    const known = this.byHash.get(hashSecret(secret));
    if (known === undefined) return undefined;
    if (this.seen.size >= MAX_SEEN) this.seen.clear();
    this.seen.set(secret, known.principal.id);
    return known;
  }

  private storedTokens(): StoredToken[] {
    return [...this.byId.values()].flatMap((known) => (known.stored === null ? [] : [known.stored]));
  }

  private add(known: KnownToken): void {
    this.byId.set(known.principal.id, known);
    this.byHash.set(known.hash, known);
  }
}

/**
 * Whether `presented` is the secret, in time that depends on the secret's
 * length only: the presented text is copied into a buffer of that length
 * (cut or zero-filled) and compared whole, and the lengths are compared as numbers.
 */
function isSecret(presented: string, expected: Buffer): boolean {
  const candidate = Buffer.alloc(expected.length);
  const written = candidate.write(presented, 'utf8');
  const sameLength = Buffer.byteLength(presented, 'utf8') === expected.length && written === expected.length;
  return timingSafeEqual(candidate, expected) && sameLength;
}

function known(
  principal: Principal,
  hash: string,
  expiresMs: number | null,
  view: TokenView,
  stored: StoredToken | null,
): KnownToken {
  return { principal, hash, expiresMs, view, stored };
}

/** The token's size limit, when it has one, as Principal and TokenView carry it. */
function sizeOf(token: { readonly maxDatabaseMb?: number }): { maxDatabaseMb?: number } {
  return token.maxDatabaseMb === undefined ? {} : { maxDatabaseMb: token.maxDatabaseMb };
}

/** The Principal fields of a token from the file or from the state, and no others (not its hash). */
function principalOf(token: Principal): Principal {
  return { id: token.id, name: token.name, role: token.role, databases: token.databases, ...sizeOf(token) };
}

function fromFile(token: FileToken): KnownToken {
  const principal = principalOf(token);
  const expires = token.expiresMs === null ? null : new Date(token.expiresMs).toISOString();
  return known(principal, token.hash, token.expiresMs, { ...principal, created: null, expires, source: 'file' }, null);
}

function fromState(token: StoredToken): KnownToken {
  const principal = principalOf(token);
  const expiresMs = token.expires === null ? null : Date.parse(token.expires);
  return known(
    principal,
    token.hash,
    expiresMs,
    { ...principal, created: token.created, expires: token.expires, source: 'api' },
    token,
  );
}
