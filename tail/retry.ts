/** Retrying a delivery with exponential back-off, so that a receiver that is down is neither hammered nor skipped. */
import type { JournalEntry } from '../journal/record';
import type { Deliver } from './deliver';

export interface RetryPolicy {
  /** Retries after the first try; null = forever. */
  readonly retries: number | null;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

/** The wait before retry number `attempt` (1-based): backoff, doubled each time, capped. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(attempt - 1, 40));
}

export class GaveUpError extends Error {
  override name = 'GaveUpError';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Delivers through `deliver` until it succeeds; each failure is reported to
 * `warn`. Throws GaveUpError after the last allowed retry: the caller then
 * stops without moving the cursor past the entry.
 */
export function withRetries(
  deliver: Deliver,
  policy: RetryPolicy,
  warn: (message: string) => void,
  wait = sleep,
): Deliver {
  return async (entry: JournalEntry) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await deliver(entry);
      } catch (err) {
        const message = (err as Error).message;
        if (policy.retries !== null && attempt > policy.retries) {
          throw new GaveUpError(`gave up on seq ${entry.seq} after ${attempt} tries: ${message}`);
        }
        const delay = backoffDelay(policy, attempt);
        warn(`${message}; retrying in ${delay} ms`);
        await wait(delay);
      }
    }
  };
}
