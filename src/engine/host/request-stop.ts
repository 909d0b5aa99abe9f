/**
 * The answer to work stopped for its request (protocol.ts RequestStop): the
 * deadline passed while it ran, or before any engine was free for it, or its
 * client went away.
 */
import { EngineError } from '../../errors';
import type { RequestStop } from '../protocol';

/** The stop an aborted signal carries; a signal aborted without one counts as a client gone. */
export function stopOf(signal: AbortSignal): RequestStop {
  const reason = signal.reason as Partial<RequestStop> | undefined;
  return reason?.reason === 'deadline' && typeof reason.ms === 'number'
    ? { reason: 'deadline', ms: reason.ms }
    : { reason: 'gone', ms: 0 };
}

/**
 * Calls `fn` with the stop once `signal` aborts (at most once); answers the
 * function that stops listening, for when the work ends first.
 */
export function onStop(signal: AbortSignal, fn: (stop: RequestStop) => void): () => void {
  const listener = (): void => fn(stopOf(signal));
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/** `started`: an engine had begun the work (it was rolled back); `statement`: the one it was running. */
export function stopError(stop: RequestStop, started: boolean, statement?: number): EngineError {
  const at = statement === undefined ? {} : { statement };
  if (stop.reason === 'gone') return new EngineError('CLIENT_CLOSED', {}, at);
  if (!started) return new EngineError('ENGINES_BUSY', { ms: stop.ms }, { retryAfter: 1 });
  return new EngineError('REQUEST_TIMEOUT', { ms: stop.ms }, at);
}
