/**
 * An import of a TypeScript source, in the order written: a statement (`import`, `export … from`,
 * a side-effect import) with what it binds, or a dynamic `import(…)` (`call` as written), whose
 * specifier is undefined when it is no literal.
 */
export interface FoundImport { specifier: string | undefined, clause: string, typeOnly: boolean, call?: string }

// One pass over the text: comments and string literals are consumed whole, so that nothing inside
// them reads as an import; a statement starts a line; `import(` is not a member (`x.import(`).
const TOKENS = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|^[ \t]*(?:import|export)\s+(type\s+)?(?:([^'"]*?)\s*from\s*)?(['"])([^'"]+)\3|(?<![\w$.])import\s*\(\s*([^,)]*)|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/gm

/** The imports of `text`, static (type-only ones marked) and dynamic, none in a comment or a string. */
export function importsIn (text: string): FoundImport[] {
  const found: FoundImport[] = []
  for (const [token, typeOnly, clause = '', , specifier, argument] of text.matchAll(TOKENS)) {
    if (specifier !== undefined) found.push({ specifier, clause, typeOnly: typeOnly !== undefined })
    if (argument === undefined) continue
    const literal = /^(['"])([^'"]+)\1$|^`([^`$]+)`$/.exec(argument.trim())
    found.push({
      specifier: literal === null ? undefined : literal[2] ?? literal[3],
      clause: '*',
      typeOnly: false,
      call: token
    })
  }
  return found
}
