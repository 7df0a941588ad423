// Compiles the ES modules of ESM-only packages (jest.config.js, ESM_ONLY) to
// CommonJS for jest's module loader, and nothing more: modern syntax and native
// class fields stay as written. ts-jest would apply this project's tsconfig
// (`useDefineForClassFields: false`, for Nest's decorators), which moves jose's
// error fields ahead of their super() call and breaks every jose error.
const ts = require('typescript');

module.exports = {
  process(source, path) {
    const { outputText, sourceMapText } = ts.transpileModule(source, {
      fileName: path,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        useDefineForClassFields: true,
        esModuleInterop: true,
        allowJs: true,
        sourceMap: true,
      },
    });
    return { code: outputText, map: sourceMapText };
  },
};
