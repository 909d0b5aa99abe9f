/**
 * A command whose request already stopped — its client hung up, or its
 * deadline passed while it waited for the server — is answered at once and
 * never reaches a service or an engine.
 */
import { stopError, stopOf } from '../../engine/host/request-stop';
import type { Middleware } from '../command-bus';

export const refuseStoppedCalls: Middleware = (_command, call, next) => {
  const stopped = call.stopped === undefined ? call.signal?.aborted === true : call.stopped();
  if (stopped && call.signal !== undefined) return Promise.reject(stopError(stopOf(call.signal), false));
  return next();
};
