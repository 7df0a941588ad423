// Unit specs sit beside the code; end-to-end tests (real HTTP, real threads,
// real processes) live in test/. `npm test` builds first: the process-level
// tests start dist/main.js exactly as production does.

// Packages that ship only ES modules. Node 22.12+ can require() them, but
// jest's own module loader cannot, so jest compiles them to CommonJS.
// (content-disposition comes with @fastify/static, which serves /docs; jose verifies tokens;
// Nest itself and its ecosystem's packages, ADR 0046; path-to-regexp 9, which @fastify/middie
// takes from 9.3.9 on, and cookie 2, which light-my-request takes from 6.8.1 on, for inject().)
const ESM_ONLY = ['content-disposition', 'jose', '@nestjs', 'path-to-regexp', 'cookie'];

const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: '<rootDir>/jest.esm-transform.js',
};
// Matched at the innermost node_modules/, so a nested copy (middie's own path-to-regexp) counts too.
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_ONLY.join('|')})/)(?!.*/node_modules/)`];

// The packages resolve to their TypeScript sources, as tsconfig.json's paths say: a test needs
// no build of them, and the threads (tsx) load the same sources.
const moduleNameMapper = {
  '^@corepool/core$': '<rootDir>/packages/core/src/index.ts',
  '^@corepool/core/(host|task|thread)$': '<rootDir>/packages/core/src/$1.ts',
  '^@corepool/nestjs$': '<rootDir>/packages/nestjs/src/index.ts',
};

// The examples are apps of their own, tested with their own jest against the packed packages
// (`npm run test:examples`): the root's jest neither runs them nor reads their node_modules.
const modulePathIgnorePatterns = ['<rootDir>/examples/'];

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      // bench/: only the harness's pure helpers; performance is never asserted in tests.
      // scripts/: the docs generators, and the tests that keep docs/ in step with the code.
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/packages/*/src/**/*.spec.ts',
        '<rootDir>/bench/**/*.spec.ts',
        '<rootDir>/scripts/**/*.spec.ts',
      ],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
      transformIgnorePatterns,
      setupFiles: ['reflect-metadata'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      moduleNameMapper,
      modulePathIgnorePatterns,
      transformIgnorePatterns,
      setupFiles: ['reflect-metadata'],
    },
  ],
};
