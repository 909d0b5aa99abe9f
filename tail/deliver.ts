/**
 * Delivering one entry: to stdout, to a shell command, or to a webhook. A
 * delivery either succeeds or throws; retrying is retry.ts's concern.
 */
import { spawn } from 'node:child_process';
import type { JournalEntry } from '../journal/record';
import { entryJson, entryText } from './format';

export type Deliver = (entry: JournalEntry) => Promise<void>;

export class DeliveryError extends Error {
  override name = 'DeliveryError';
}

/**
 * Resolves once the line is handed to the kernel, so that the cursor written
 * after it never counts a line still sitting in this process's buffer.
 */
export function stdoutSink(format: 'json' | 'text', out: NodeJS.WritableStream = process.stdout): Deliver {
  const render = format === 'json' ? entryJson : entryText;
  return (entry) =>
    new Promise<void>((resolve, reject) => {
      out.write(`${render(entry)}\n`, (err) => (err ? reject(err) : resolve()));
    });
}

/** `sh -c command` with the entry JSON (and a newline) on stdin; exit status 0 is a delivery. */
export function execSink(command: string, timeoutMs: number): Deliver {
  return (entry) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], {
        stdio: ['pipe', 'inherit', 'inherit'],
        env: { ...process.env, SQLSCRIBE_SEQ: String(entry.seq) },
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new DeliveryError(`-exec could not start: ${err.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else
          reject(
            new DeliveryError(
              `-exec ${signal === null ? `exited with ${code}` : `was killed by ${signal}`} for seq ${entry.seq}`,
            ),
          );
      });
      // A command that does not read its stdin closes the pipe: that is not a failed delivery.
      child.stdin.on('error', () => undefined);
      child.stdin.end(`${entryJson(entry)}\n`);
    });
}

/** POST of the entry JSON; any 2xx answer is a delivery, anything else (or no answer in time) is not. */
export function webhookSink(url: string, timeoutMs: number): Deliver {
  return async (entry) => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        // The seq names the entry: a receiver that sees one again (after a follower's crash) can drop it.
        headers: { 'content-type': 'application/json', 'idempotency-key': String(entry.seq) },
        body: entryJson(entry),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new DeliveryError(`-webhook ${url}: ${(err as Error).message} for seq ${entry.seq}`);
    }
    // The body is read so that the connection can be reused.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status < 200 || response.status > 299)
      throw new DeliveryError(`-webhook ${url} answered ${response.status} for seq ${entry.seq}`);
  };
}
