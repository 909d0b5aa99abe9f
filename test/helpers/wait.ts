/**
 * Waiting in tests: `sleep` for when a test means to let time pass (a deadline
 * to expire), `waitFor` for when it waits for a state it can observe, so that
 * it goes on as soon as the state holds instead of after a guessed delay.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Check again this often (default 25 ms). */
  everyMs?: number;
  /** Said in the error when the condition never holds. */
  what?: string;
}

/**
 * Checks `condition` until it returns a truthy value and returns that value;
 * throws when it has not held within the timeout. A condition that throws is
 * treated as not holding yet (a server still starting refuses connections).
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const everyMs = options.everyMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const cause = last instanceof Error ? ` (last error: ${last.message})` : '';
      throw new Error(`waited ${timeoutMs} ms for ${options.what ?? 'a condition'}${cause}`);
    }
    await sleep(everyMs);
  }
}

/**
 * `waitFor` for a test that asserts on the outcome itself: true once `check`
 * holds, false when it has not within `ms` (a check that throws has not held).
 */
export async function eventually(check: () => boolean | Promise<boolean>, ms: number, everyMs = 100): Promise<boolean> {
  try {
    await waitFor(check, { timeoutMs: ms, everyMs });
    return true;
  } catch {
    return false;
  }
}
