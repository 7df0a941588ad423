// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/',
      'coverage/',
      'node_modules/',
      'bench/results/',
      // Apps of their own: each is built by its own tsc (`npm run test:examples`).
      'examples/',
      // TypeDoc's output and API Extractor's scratch folder.
      'dist-docs/',
      'packages/*/temp/',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      // Typed by what the test generates from a running service (test/openapi-client.e2e-spec.ts).
      'test/fixtures/openapi-client/',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default:` branch is a deliberate "everything else".
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // The official client is installed under the name its ecosystem requires, so that
      // @willsoto/nestjs-prometheus and corepool share one registry (ADR 0046).
      'no-restricted-imports': [
        'error',
        { name: '@prometheus-io/client', message: "Import 'prom-client' (ADR 0046)." },
      ],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'multi-line'],
    },
  },
  {
    // Tests read arbitrary JSON answers; typing every one would hide what they check.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
