/**
 * A temporary directory for one test, removed only after the test's servers
 * have stopped.
 *
 * Not tap's testdir(): tap removes that directory before it runs the test's
 * teardowns, so a server still running there may write into it (its
 * applied-checkpoint, a rotated journal file), make the removal fail, and
 * skip the teardown that would have stopped it; the file then hangs until it
 * times out. tap runs teardowns last-registered first, so the removal
 * registered here, before any server starts, runs after every server's stop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** File contents by name; an object is a subdirectory. */
export interface ScratchContent {
  [name: string]: string | Buffer | ScratchContent;
}

interface HasTeardown {
  teardown(fn: () => void | Promise<void>): void;
}

export function scratchDir(tt: HasTeardown, content: ScratchContent = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-test-'));
  tt.teardown(() => {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  write(dir, content);
  return dir;
}

function write(dir: string, content: ScratchContent): void {
  for (const [name, value] of Object.entries(content)) {
    const target = path.join(dir, name);
    if (typeof value === 'string' || Buffer.isBuffer(value)) {
      fs.writeFileSync(target, value);
    } else {
      fs.mkdirSync(target, { recursive: true });
      write(target, value);
    }
  }
}
