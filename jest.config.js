// Unit specs sit beside the code; end-to-end tests (real HTTP, real threads,
// real processes) live in test/. `npm test` builds first: the process-level
// tests start dist/main.js exactly as production does.
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform,
      setupFiles: ['reflect-metadata'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      setupFiles: ['reflect-metadata'],
    },
  ],
};
