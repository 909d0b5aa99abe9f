/**
 * The error catalog as the Markdown table the README publishes. The test of
 * the catalog compares the README with this, so neither drifts.
 */
import { catalog, errorClass, formatCode } from './errors';

export function catalogMarkdown(): string {
  const lines = ['| code | name | class | HTTP | message |', '|---|---|---|---|---|'];
  for (const [name, entry] of Object.entries(catalog)) {
    const message = entry.message.replace(/\|/g, '\\|');
    lines.push(`| \`${formatCode(entry.code)}\` | ${name} | ${errorClass(entry.code)}xxx | ${entry.status} | ${message} |`);
  }
  return lines.join('\n');
}
