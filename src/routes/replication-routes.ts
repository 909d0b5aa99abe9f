/** POST /admin/promote: a replica takes over as primary (see docs/replication.md). */
import type Router from '@koa/router';
import { EngineError } from '../errors';
import { sendJson } from '../http/respond';
import type { ReplicationControl } from '../services/server-role';

export function replicationRoutes(router: Router, replication: ReplicationControl | null): void {
  router.post('/admin/promote', async (ctx) => {
    if (replication === null)
      throw new EngineError('PROMOTION_REFUSED', {
        detail: 'it replicates nothing (start it with -follow to make a standby)',
      });
    sendJson(ctx, 200, { ok: true, replication: await replication.promote() });
  });
}
