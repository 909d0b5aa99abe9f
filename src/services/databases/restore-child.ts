/**
 * The entry of a restore's rebuild process: one job, handed over in
 * SQLSCRIBE_RESTORE_JOB, one reply, then it ends. The job is a live
 * restore's (restore-rebuild.ts: find the target, then rebuild) or a
 * replica's `restoredb` entry (restore-state.ts: rebuild to a known target). The server
 * (restore-process.ts) starts one per restore or dry run, under a heap bound
 * of its own, and kills it at its deadline: the rebuild's work, its journal
 * reads and its memory stay out of the server's process.
 */
import '../../compile-cache';
import { EngineError } from '../../errors';
import { JOB_VARIABLE, planAndRebuild, type RestoreJob, type RestoreReply } from './restore-rebuild';
import { rebuildState, type StateJob } from './restore-state';

function reply(message: RestoreReply): void {
  // Ends once the reply is on its way; a parent gone meanwhile has nothing left to hear.
  process.send?.(message, undefined, undefined, () => process.exit(0));
}

// The server is gone: the rebuild is of no use to anyone (noticed between statements, see YIELD_EVERY).
process.on('disconnect', () => process.exit(1));

function run(job: RestoreJob | StateJob): Promise<RestoreReply> {
  if ('kind' in job) return rebuildState(job).then((file) => ({ kind: 'state', file }));
  return planAndRebuild(job).then((planned) => ({ kind: 'planned', planned }));
}

run(JSON.parse(process.env[JOB_VARIABLE] ?? 'null') as RestoreJob | StateJob).then(
  (answer) => reply(answer),
  (error: unknown) => {
    if (error instanceof EngineError) return reply({ kind: 'error', error: error.toData() });
    process.stderr.write(`sqlscribe restore: ${error instanceof Error ? error.stack : String(error)}\n`);
    reply({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  },
);
