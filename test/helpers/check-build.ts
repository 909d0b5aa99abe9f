/**
 * Run by tap before any test file (package.json "tap"."before"): stops the run
 * when dist/ is stale, instead of testing the previous build.
 */
import path from 'node:path';
import { staleMessage, staleSources } from './stale-build';

const stale = staleSources(path.resolve(__dirname, '../..'));
if (stale.length > 0) {
  process.stderr.write(`${staleMessage(stale)}\n`);
  process.exitCode = 1;
}
