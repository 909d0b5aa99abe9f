/**
 * The error catalog as the Markdown table docs/errors.md publishes. The test
 * of the catalog compares that page with this, so neither drifts.
 */
import fs from 'node:fs';
import { catalog, errorClass, formatCode } from './errors';

export function catalogMarkdown(): string {
  const lines = ['| code | name | class | HTTP | message |', '|---|---|---|---|---|'];
  for (const [name, entry] of Object.entries(catalog)) {
    const message = entry.message.replace(/\|/g, '\\|');
    lines.push(
      `| \`${formatCode(entry.code)}\` | ${name} | ${errorClass(entry.code)}xxx | ${entry.status} | ${message} |`,
    );
  }
  return lines.join('\n');
}

/** Rewrites the table between the catalog markers of a Markdown file (`npm run catalog`). */
export function updateCatalogPage(file: string): void {
  const page = fs.readFileSync(file, 'utf8');
  const updated = page.replace(
    /(<!-- catalog:start -->\n)[\s\S]*?(\n<!-- catalog:end -->)/,
    (_, start: string, end: string) => start + catalogMarkdown() + end,
  );
  fs.writeFileSync(file, updated);
}

if (require.main === module) updateCatalogPage(process.argv[2] ?? 'docs/errors.md');
