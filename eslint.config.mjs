// typescript-eslint's recommended rules with type information, over the service, the journal and the replay tool.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/console/static/**', 'test/**', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
  {
    rules: {
      // Methods that implement a Promise-returning interface (the write path's apply, discard, tookEffect) are
      // async so that a throw becomes a rejection, as callers expect, even when they await nothing.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
