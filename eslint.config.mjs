// typescript-eslint's recommended rules with type information, over the service, the journal and the replay tool;
// and ESLint's recommended rules, with the browser's globals, over the console's browser modules (typed by JSDoc and
// checked by tsconfig.browser.json, so no typed rules here: they would need that program too).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const browserModules = ['src/console/static/**/*.js', 'src/console/editor/**/*.mjs'];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.node/**',
      'test/**',
      'scripts/**',
      '**/*.d.ts',
      'eslint.config.mjs',
      'prettier.config.mjs',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Methods that implement a Promise-returning interface (the write path's apply, discard, tookEffect) are
      // async so that a throw becomes a rejection, as callers expect, even when they await nothing.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: browserModules,
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { ...globals.browser } },
  },
);
