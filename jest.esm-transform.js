// Compiles the ES modules of ESM-only packages (jest.config.js, ESM_ONLY) to
// CommonJS for jest's module loader, and nothing more: modern syntax and native
// class fields stay as written. ts-jest would apply this project's tsconfig
// (`useDefineForClassFields: false`, for Nest's decorators), which moves jose's
// error fields ahead of their super() call and breaks every jose error.
//
// What only an ES module has is given its CommonJS equivalent: `import.meta.url`
// becomes the file's URL, `import.meta.dirname` and `.filename` `__dirname` and
// `__filename`, `import.meta.resolve` becomes `require.resolve`, and
// a module's own `const require = createRequire(import.meta.url)` (Nest 12's
// packages have a few) is left out, since a CommonJS module has `require` already.
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

// jest keys its cache by the source file only: a change here must not serve an older output.
const OWN_SOURCE = readFileSync(__filename, 'utf8') + ts.version;

const isImportMeta = (node) =>
  ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword;

const declaresRequire = (node) =>
  ts.isVariableStatement(node) &&
  node.declarationList.declarations.some(
    (declaration) => ts.isIdentifier(declaration.name) && declaration.name.text === 'require',
  );

/** `require(module).member`, spelled out. */
const requireMember = (f, module, member) =>
  f.createPropertyAccessExpression(
    f.createCallExpression(f.createIdentifier('require'), undefined, [
      f.createStringLiteral(module),
    ]),
    member,
  );

function commonJsEquivalents(context) {
  const f = context.factory;
  const visit = (node) => {
    if (ts.isPropertyAccessExpression(node) && isImportMeta(node.expression)) {
      if (node.name.text === 'url') {
        const fileUrl = f.createCallExpression(
          requireMember(f, 'node:url', 'pathToFileURL'),
          undefined,
          [f.createIdentifier('__filename')],
        );
        return f.createPropertyAccessExpression(fileUrl, 'href');
      }
      if (node.name.text === 'dirname') return f.createIdentifier('__dirname');
      if (node.name.text === 'filename') return f.createIdentifier('__filename');
      if (node.name.text === 'resolve') {
        return f.createPropertyAccessExpression(f.createIdentifier('require'), 'resolve');
      }
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (file) =>
    f.updateSourceFile(
      file,
      file.statements.filter((statement) => !declaresRequire(statement)).map((s) => visit(s)),
    );
}

module.exports = {
  getCacheKey(source, path) {
    return createHash('sha256').update(OWN_SOURCE).update(path).update(source).digest('hex');
  },
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
      transformers: { before: [commonJsEquivalents] },
    });
    return { code: outputText, map: sourceMapText };
  },
};
