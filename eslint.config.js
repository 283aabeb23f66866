import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'client/dist/**', 'client/src/openapi.ts', 'coverage/**', '.tap/**', 'bench/results/**', 'scratch/**', '.scratch/**']
  }),
  {
    // TypeBox's idiom names a schema and its static type alike: `const Problem = Type.Object(…)`, `type Problem = Static<typeof Problem>`.
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  }
]
