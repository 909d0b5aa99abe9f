/**
 * The entry of an engine process: an Engine that answers calls from its
 * parent. It runs SQL synchronously; the parent stops a runaway statement by
 * killing this process (better-sqlite3 cannot interrupt one).
 */
import { Engine } from '../engine';
import type { ExecRequest, RowsRequest } from '../protocol';
import { toEngineError } from '../sqlite-errors';
import type { EngineCall, EngineReply } from './engine-messages';
import { progressWriter } from './progress-board';

// A lock held for a moment by another process (a checkpoint, a last handle closing) is waited out here, not answered as SQLITE_BUSY.
const engine = new Engine({ maxOpenDatabases: Number(process.env.SQLSCRIBE_MAX_OPEN_DATABASES) || 64, busyTimeoutMs: 1000 });

const reportProgress = progressWriter();

/** A reply the parent can no longer take (it is gone, or closed the channel) is dropped: the process is on its way out. */
function send(reply: EngineReply): void {
  process.send?.(reply, undefined, undefined, () => undefined);
}

function run(call: EngineCall): unknown {
  const [first, second] = call.args;
  // Statement 0 is known to have started when the call was sent.
  const progress = (statement: number): void => {
    if (statement > 0) reportProgress(call.id, statement);
  };
  switch (call.method) {
    case 'exec': return engine.exec(first as ExecRequest, progress);
    case 'execHeldGroup': return engine.execHeldGroup(first as ExecRequest[], progress);
    case 'commitHeld': return engine.commitHeld(first as number);
    case 'rollbackHeld': return engine.rollbackHeld();
    case 'journalPosition': return engine.journalPosition(first as string);
    case 'beginSession': return engine.beginSession(first as string);
    case 'execInSession': return engine.execInSession(first as ExecRequest, progress);
    case 'endSession': return engine.endSession(first as boolean, second as number | undefined);
    case 'tables': return engine.tables(first as string);
    case 'schema': return engine.schema(first as string, second as string) ?? null;
    case 'rows': return engine.rows(first as RowsRequest);
    case 'createDatabase': return engine.createDatabase(first as string, second as number | undefined);
    case 'closeDatabase': return engine.closeDatabase(first as string);
  }
}

process.on('message', (call: EngineCall) => {
  try {
    send({ id: call.id, kind: 'result', value: run(call) });
  } catch (error) {
    const engineError = toEngineError(error);
    if (engineError.status >= 500) process.stderr.write(`sqlscribe engine: ${error instanceof Error ? error.stack : String(error)}\n`);
    send({ id: call.id, kind: 'error', error: engineError.toData() });
  }
});

send({ id: 0, kind: 'ready' });

// The parent is gone: nothing more will come.
process.on('disconnect', () => {
  engine.close();
  process.exit(0);
});
