// One formatter for the whole repository, set to what the code already did by hand (single quotes, semicolons,
// trailing commas, parentheses around arrow parameters) so that adopting it changed layout, not style; the width
// is the 120 columns the code was written to. `npm run lint` checks it; `npm run format` applies it.
/** @type {import('prettier').Config} */
export default {
  printWidth: 120,
  singleQuote: true,
  semi: true,
  trailingComma: 'all',
  arrowParens: 'always',
};
