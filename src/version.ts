/** The package version, reported by /health (semver). */
import fs from 'node:fs';
import path from 'node:path';

/** Found by walking up, so that it works from src/ (tests) and from dist/src/ (the build). */
function readVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
}

export const version: string = readVersion();
