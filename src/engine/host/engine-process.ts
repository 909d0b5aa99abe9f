/**
 * The entry of an engine process: an Engine that answers calls from its
 * parent. It runs SQL synchronously; the parent stops a runaway statement by
 * killing this process (better-sqlite3 cannot interrupt one).
 */
import '../../compile-cache';
import { Engine } from '../engine';
import { toEngineError } from '../sqlite-errors';
import type { AnswerOf, ArgsOf, EngineCall, EngineMethod, EngineReply } from './engine-messages';
import { progressWriter } from './progress-board';
import { uploadStatements } from '../transfer/sqlite-upload';
import { packOutcomes, packResults } from './packed-results';
import { unpackRequest } from './packed-requests';

// A lock held for a moment by another process (a checkpoint, a last handle closing) is waited out here, not answered as SQLITE_BUSY.
const engine = new Engine({
  maxOpenDatabases: Number(process.env.SQLSCRIBE_MAX_OPEN_DATABASES) || 64,
  busyTimeoutMs: 1000,
});

const reportProgress = progressWriter();

/** A reply the parent can no longer take (it is gone, or closed the channel) is dropped: the process is on its way out. */
function send(reply: EngineReply): void {
  process.send?.(reply, undefined, undefined, () => undefined);
}

/** Reports the statement a call has reached (statement 0 is known to have started when the call was sent). */
type Progress = (statement: number, brief: boolean) => void;

/** How this process answers each method of the protocol; the compiler holds it to engine-messages.ts. */
const answer: { [M in EngineMethod]: (progress: Progress, ...args: ArgsOf<M>) => AnswerOf<M> } = {
  exec: (progress, request) => packResults(engine.exec(unpackRequest(request), progress)),
  execHeldGroup: (progress, requests) => packOutcomes(engine.execHeldGroup(requests.map(unpackRequest), progress)),
  commitHeld: (_progress, seq) => engine.commitHeld(seq),
  rollbackHeld: () => engine.rollbackHeld(),
  journalPosition: (_progress, file) => engine.journalPosition(file),
  tables: (_progress, file) => engine.tables(file),
  schema: (_progress, file, table) => engine.schema(file, table) ?? null,
  rows: (_progress, request) => engine.rows(request),
  exportDatabase: (_progress, file, request) => engine.exportDatabase(file, request),
  uploadStatements: (_progress, file) => uploadStatements(file),
  createDatabase: (_progress, file, createdSeq) => engine.createDatabase(file, createdSeq),
  closeDatabase: (_progress, file) => engine.closeDatabase(file),
  copyDatabase: (_progress, source, target, seq, template) =>
    engine.copyDatabase(source, target, seq ?? undefined, template),
  beginSession: (_progress, file) => engine.beginSession(file),
  execInSession: (progress, request) => packResults(engine.execInSession(unpackRequest(request), progress)),
  endSession: (_progress, commit, seq) => engine.endSession(commit, seq),
};

function run(call: EngineCall): unknown {
  reportProgress.begin(call.id);
  const progress: Progress = (statement, brief) => {
    if (statement > 0) reportProgress.statement(call.id, statement, brief);
  };
  // One call's method and arguments always agree (EngineCall); the table cannot be indexed by the union without this widening.
  const method = answer[call.method] as (progress: Progress, ...args: unknown[]) => unknown;
  return method(progress, ...call.args);
}

process.on('message', (call: EngineCall) => {
  try {
    send({ id: call.id, kind: 'result', value: run(call) });
  } catch (error) {
    const engineError = toEngineError(error);
    if (engineError.status >= 500)
      process.stderr.write(`sqlscribe engine: ${error instanceof Error ? error.stack : String(error)}\n`);
    send({ id: call.id, kind: 'error', error: engineError.toData() });
  }
});

send({ id: 0, kind: 'ready' });

// The parent is gone: nothing more will come.
process.on('disconnect', () => {
  engine.close();
  process.exit(0);
});
