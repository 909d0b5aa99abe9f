/** create-tokens, list-tokens, revoke-token: the personal tokens (admin only, see ../access.ts). */
import { EngineError } from '../../errors';
import type { Clock } from '../../clock';
import { stampOf } from '../../access/principal';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import { MAX_COPIES, type DatabaseCopies } from '../../services/databases/database-copies';
import { normalizeDatabaseName } from '../../database-names';
import type { DatabaseLifecycle } from '../../services/databases/database-lifecycle';
import type { TokenRegistry } from '../../tokens/token-registry';
import { readTokenRequest } from '../../tokens/token-request';
import type { Handlers } from '../command-bus';

export interface TokenHandlerDeps {
  readonly registry: TokenRegistry;
  readonly directory: DatabaseDirectory;
  readonly lifecycle: DatabaseLifecycle;
  readonly copies: DatabaseCopies;
  readonly clock: Clock;
  /** Ends what a revoked token still holds (its open session, its live journal feeds), before the answer. */
  readonly revoked: (id: string) => Promise<void>;
}

export function tokenHandlers({
  registry,
  directory,
  lifecycle,
  copies,
  clock,
  revoked,
}: TokenHandlerDeps): Pick<Handlers, 'create-tokens' | 'list-tokens' | 'revoke-token'> {
  const enabled = (): void => {
    if (!registry.enabled) throw new EngineError('TOKENS_NOT_CONFIGURED');
  };
  return {
    'create-tokens': async ({ body }, call) => {
      enabled();
      const request = readTokenRequest(body, clock.now());
      registry.checkNames(request.specs);
      // A class comes with its databases: one request, and thirty students can start. The
      // databases come first: a failure there must not leave tokens whose secrets nobody saw.
      const databases: string[] = [];
      if (request.isClass && !directory.single) {
        const missing = request.specs
          .map(({ name }) => `${name}.db`)
          .filter((db) => !directory.exists(directory.refOf(db)));
        const by = stampOf(call.principal);
        if (request.from === undefined) {
          for (const db of missing) await lifecycle.create(db, true, null, by);
        } else {
          // Copies of the template, in groups as large as one copy request may be.
          for (let at = 0; at < missing.length; at += MAX_COPIES)
            await copies.copy(missing.slice(at, at + MAX_COPIES), normalizeDatabaseName(request.from), call.principal);
        }
        databases.push(...missing);
      }
      return { tokens: registry.create(request.specs), databases };
    },
    'list-tokens': () => {
      enabled();
      return { tokens: registry.list() };
    },
    'revoke-token': async ({ id }) => {
      enabled();
      const token = registry.revoke(id);
      await revoked(token.id);
      return { token };
    },
  };
}
