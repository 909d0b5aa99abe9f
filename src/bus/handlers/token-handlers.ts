/** create-tokens, list-tokens, revoke-token: the personal tokens (admin only, see ../access.ts). */
import { EngineError } from '../../errors';
import type { Clock } from '../../clock';
import { stampOf } from '../../access/principal';
import type { DatabaseDirectory } from '../../services/database-directory';
import type { DatabaseLifecycle } from '../../services/database-lifecycle';
import type { TokenRegistry } from '../../tokens/token-registry';
import { readTokenRequest } from '../../tokens/token-request';
import type { Handlers } from '../command-bus';

export interface TokenHandlerDeps {
  readonly registry: TokenRegistry;
  readonly directory: DatabaseDirectory;
  readonly lifecycle: DatabaseLifecycle;
  readonly clock: Clock;
  /** Ends what a revoked token still holds (its open session). */
  readonly revoked: (id: string) => Promise<void>;
}

export function tokenHandlers({ registry, directory, lifecycle, clock, revoked }: TokenHandlerDeps): Pick<Handlers, 'create-tokens' | 'list-tokens' | 'revoke-token'> {
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
        for (const { name } of request.specs) {
          const db = `${name}.db`;
          if (directory.exists(directory.refOf(db))) continue;
          await lifecycle.create(db, true, null, stampOf(call.principal));
          databases.push(db);
        }
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
