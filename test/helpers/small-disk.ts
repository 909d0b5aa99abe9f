/**
 * Small real disks for the tests of full disks: a tmpfs mounted for one test
 * and gone when it ends. Mounting needs root; a test asks canMount() first
 * and skips, saying why, where it may not.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Whether this process may mount a tmpfs (root, and mount works here): tried once on a probe directory. */
export function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = fs.mkdtempSync('/tmp/sqlscribe-mount-probe-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmdirSync(probe);
  }
}

/**
 * A tmpfs of `size`, unmounted and removed when the test ends. It lives under
 * /tmp, outside the test's own scratch directory, which tap removes first.
 */
export function mountSmallDisk(test: { teardown(fn: () => void): void }, size: string): string {
  const dir = fs.mkdtempSync('/tmp/sqlscribe-small-disk-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  test.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    fs.rmdirSync(dir);
  });
  return dir;
}
