/**
 * The worker thread of WorkerApplier (replica-applier.ts): it owns the
 * replica's applying engine and answers one request at a time, so that a long
 * rebuild never holds up the server's own thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { databaseFileIn } from '../../database-names';
import { EngineError } from '../../errors';
import {
  InThreadApplier,
  type ApplierAnswer,
  type ApplierPlaces,
  type ApplierRequest,
  type StopRestores,
} from './replica-applier';

const places = workerData as ApplierPlaces;
const port = parentPort;
if (port === null) throw new Error('replica-applier-thread runs as a worker thread only');

const tell = (answer: ApplierAnswer): void => port.postMessage(answer);
const applier = new InThreadApplier(
  databaseFileIn(places),
  places.journalFile,
  (message) => tell({ log: message }),
  places.restores,
);

async function run(request: ApplierRequest): Promise<void> {
  switch (request.op) {
    case 'rebuild':
      return applier.rebuild(request.entries);
    case 'redoVoided':
      return applier.redoVoided(request.seqs);
    case 'reset':
      return applier.reset();
    case 'close':
      return applier.close();
  }
}

// Requests come one after another (the follower awaits each), and are answered in that order.
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: ApplierRequest | StopRestores) => {
  // Not in turn: the request it would queue behind is the rebuild it stops.
  if (request.op === 'stopRestores') return applier.stopRestores();
  queue = queue.then(() =>
    run(request).then(
      () => tell({ id: request.id, ok: true }),
      (error: unknown) => tell(failure(request.id, error)),
    ),
  );
});

/** An EngineError crosses whole (its code decides whether the follower halts); anything else as its message. */
function failure(id: number, error: unknown): ApplierAnswer {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof EngineError) return { id, ok: false, error: message, engineError: error.toData() };
  return { id, ok: false, error: message };
}
