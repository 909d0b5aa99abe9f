// @ts-check
// The journal's live feed for the progress grid: GET /journal as server-sent
// events (admin only), read with fetch so that the token travels in its
// header (EventSource cannot send one), only the `attempt` entries
// (`kind=attempt`). `since` far past the head means "from now on"; each
// attempt calls `onAttempt`. A dropped feed is opened again after a pause
// while the caller still wants it.

import { storedToken } from './api.js';

const FROM_NOW = '999999999999999';
const RETRY_MS = 3000;

/**
 * Follows the journal until the returned stop() is called; `onState` hears 'live' or 'down'.
 * @param {(entry: any) => void} onAttempt called with each attempt entry, as the journal wrote it
 * @param {(state: 'live' | 'down') => void} [onState]
 * @returns {() => void} stop
 */
export function followAttempts(onAttempt, onState = () => {}) {
  let stopped = false;
  /** @type {AbortController | undefined} */
  let controller;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retry;

  /** @param {string} event */
  function handle(event) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('\n');
    if (data === '') return;
    try {
      const entry = JSON.parse(data);
      if (entry.kind === 'attempt') onAttempt(entry);
    } catch {
      // Not an entry (an error event's text): the stream ends after it.
    }
  }

  async function open() {
    controller = new AbortController();
    /** @type {Record<string, string>} */
    const headers = { Accept: 'text/event-stream' };
    const token = storedToken();
    if (token !== null) headers['X-Service-Token'] = token;
    try {
      const response = await fetch(`/journal?kind=attempt&since=${FROM_NOW}`, {
        headers,
        cache: 'no-store',
        signal: controller.signal,
      });
      if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`);
      onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          handle(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // Aborted, refused or cut: said below, and tried again unless stopped.
    }
    if (stopped) return;
    onState('down');
    retry = setTimeout(open, RETRY_MS);
  }

  open();
  return () => {
    stopped = true;
    clearTimeout(retry);
    controller?.abort();
  };
}
