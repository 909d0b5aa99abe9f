/**
 * Token secrets: made from 32 random bytes, kept only as their SHA-256.
 * A slow password hash would add nothing: a secret with 256 random bits
 * cannot be guessed from its hash, and per-request checks stay cheap.
 */
import { createHash, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'sqs_';
const HASH = /^sha256:[0-9a-f]{64}$/;

/** `sqs_` + base64url of 32 random bytes: 47 characters, safe in headers, URLs and CSV. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** `sha256:<64 hex>` of the secret's UTF-8 bytes, as `printf %s "$SECRET" | sha256sum` prints it. */
export function hashSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

export function isSecretHash(value: unknown): value is string {
  return typeof value === 'string' && HASH.test(value);
}

/** A token id: not secret, short, unguessable enough that ids do not reveal how many tokens exist. */
export function newTokenId(): string {
  return `tok_${randomBytes(6).toString('hex')}`;
}
