/** POST /admin/promote (src/routes/replication-routes.ts) and the replication status record, in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { ADMIN_ONLY, json, mergeErrors, operation, SERVED } from './operation';

export function replicationPaths(): Record<string, JsonObject> {
  return {
    '/admin/promote': {
      post: operation({
        operationId: 'promote',
        summary: 'Take over as primary (a replica only)',
        description: [
          'A replica (-follow) takes the primary lease with the next epoch, publishes a fence into the stream (from then on the old',
          "primary's writes are refused with 409 `[SQ7012]`), applies everything before the fence and starts taking writes, shipping",
          'them from the fence on. Any other server answers 409 `[SQ7013]`. Admin only on a server with tokens. See docs/replication.md.',
        ].join(' '),
        tag: 'service',
        success: {
          200: json("This server's replication status once it is primary.", {
            type: 'object',
            additionalProperties: false,
            required: ['ok', 'replication'],
            properties: { ok: { const: true }, replication: { $ref: '#/components/schemas/ReplicationStatus' } },
          }),
        },
        errors: mergeErrors(SERVED, ADMIN_ONLY, { 409: ['PROMOTION_REFUSED'] }),
      }),
    },
  };
}

export function replicationSchemas(): Record<string, JsonObject> {
  const count = { type: 'integer', minimum: 0 };
  return {
    ReplicationStatus: {
      type: 'object',
      description: 'Only on a server started with -journal-nats (primary) or -follow (replica).',
      additionalProperties: false,
      required: ['role', 'stream', 'node', 'epoch', 'primary', 'appliedSeq'],
      properties: {
        role: {
          enum: ['primary', 'replica', 'fenced', 'standalone'],
          description: '`fenced`: a primary another server took over from; it refuses writes.',
        },
        stream: { type: 'string', description: 'The JetStream stream of the journal' },
        node: { type: 'string', description: "This server's name in the lease (-node)" },
        epoch: { ...count, description: 'The primary lease epoch this server knows (0 before it has read one)' },
        primary: { type: 'string', description: 'Where writes go (empty while not known)' },
        appliedSeq: {
          ...count,
          description: "The journal seq this server's databases hold; also sent as X-Journal-Seq on every answer",
        },
        lag: {
          type: 'object',
          additionalProperties: false,
          required: ['seqBehind', 'secondsBehind', 'primaryLastSeq'],
          description: 'Replica: how far behind the primary it is.',
          properties: { seqBehind: count, secondsBehind: { type: 'number', minimum: 0 }, primaryLastSeq: count },
        },
        halted: {
          type: 'object',
          additionalProperties: false,
          required: ['error'],
          description:
            'Replica: it stopped applying the journal (a gap, a damaged chunk, or a restore it could not rebuild within its bounds: code 6059) and serves what it holds',
          properties: { error: { type: 'string' }, code: { type: 'integer' } },
        },
      },
    },
  };
}
