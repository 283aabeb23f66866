import neostandard from 'neostandard'
import noDeprecatedOption from './tools/eslint/no-deprecated-option.js'

export default [
  ...neostandard({
    ts: true,
    ignores: [
      'dist/**', 'client/dist/**', 'client/src/openapi.ts', 'coverage/**', '.tap/**', 'bench/results/**'
    ]
  }),
  {
    // A directive that suppresses nothing fails the lint: test/tools/deprecated-options.probe.ts
    // relies on it to prove that the rules below still report what they must.
    linterOptions: { reportUnusedDisableDirectives: 'error' }
  },
  {
    // TypeBox's idiom names a schema and its static type alike: `const Problem = Type.Object(…)`,
    // `type Problem = Static<typeof Problem>`.
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  },
  {
    // Lines a reader sees whole: 120 characters, but for a URL or a regular expression.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    rules: { '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }] }
  },
  {
    // A deprecated API (a driver option that no longer has an effect, say) fails the lint. The
    // rules need the types: one program, test/tsconfig.json's, holds every file but the example
    // (built against the client's published types) and the client's type tests (their own
    // program); one program rather than a project per tsconfig keeps the lint fast.
    files: ['**/*.ts'],
    ignores: ['examples/**', 'client/test/types/**'],
    languageOptions: { parserOptions: { project: './test/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    plugins: { local: { rules: { 'no-deprecated-option': noDeprecatedOption } } },
    rules: { '@typescript-eslint/no-deprecated': 'error', 'local/no-deprecated-option': 'error' }
  }
]
