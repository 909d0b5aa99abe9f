/**
 * The files of deploy/ as the tests read them: the systemd unit's settings
 * and its command line, and the check that an operator's tool is installed.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const UNIT = path.join(ROOT, 'deploy/systemd/sqlscribe.service');

/** The unit's settings, continuation lines joined: `ExecStart` → its command line. The last one of a key wins. */
export function unitSettings(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) settings.set(match[1] as string, (match[2] as string).trim());
  }
  return settings;
}

/** systemd's time span (`11min`, `90s`, `1min 30s`, a bare number of seconds) in seconds. */
export function timeSpanSeconds(span: string): number {
  const units: Record<string, number> = { s: 1, sec: 1, m: 60, min: 60, h: 3600, hr: 3600 };
  let total = 0;
  for (const [, amount, unit] of span.matchAll(/(\d+)\s*([a-z]*)/g))
    total += Number(amount) * (units[unit || 's'] ?? NaN);
  return total;
}

/** Undefined when `command --version` runs; else the line that installs it. */
export function missingTool(command: string, aptPackage: string): string | undefined {
  const run = spawnSync(command, ['--version'], { encoding: 'utf8' });
  return run.error === undefined && run.status === 0
    ? undefined
    : `${command} is not installed: apt-get install -y ${aptPackage}`;
}

/** A tokens file (docs/flags.md) holding one admin token; gives its secret. */
export function writeAdminTokensFile(file: string, name = 'operator'): string {
  const secret = `sqs_${crypto.randomBytes(24).toString('base64url')}`;
  const hash = `sha256:${crypto.createHash('sha256').update(secret).digest('hex')}`;
  fs.writeFileSync(file, JSON.stringify({ tokens: [{ name, role: 'admin', hash }] }));
  return secret;
}
