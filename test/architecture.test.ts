// docs/architecture.md's floors, held: a room imports only from its own floor or below. And the
// suite's layout: `npm test` runs every test file exactly once, on its own or in a group.
import { execFileSync } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { filesOf, GROUPS } from './_groups/groups.js'
import { importsIn } from './helpers/imports.js'
import { NODE, nodeArgs } from './helpers/node-child.js'
import { isTestFile, tapRuns } from '../tools/run-tests.js'

const ROOT = path.resolve(import.meta.dirname, '..')

/**
 * Floors from the top; a top-level file or folder not named here is outside the service
 * (the stand-in, the demo data), and only the process floor may reach it.
 */
const FLOORS: string[][] = [
  ['server.ts', 'process'],
  ['app.ts', 'routes'],
  ['plugins'],
  ['list-endpoint', 'changes', 'counts'],
  ['list-query', 'mongodb-regex'],
  ['database', 'access-control', 'telemetry'],
  ['schemas', 'lib']
]
const floorOf = (room: string): number => FLOORS.findIndex((rooms) => rooms.includes(room))
const roomOf = (file: string): string => path.relative(ROOT, file).split(path.sep)[0] as string

async function sources (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name))
}

/**
 * The relative specifiers `text` imports: `import … from`, `export … from`, `import '…'` and
 * `import('…')` with a literal, type-only ones too; none in a comment or inside another string.
 */
function relativeImports (text: string): string[] {
  return importsIn(text).map(({ specifier }) => specifier)
    .filter((specifier): specifier is string => specifier !== undefined && /^\.{1,2}\//.test(specifier))
}

t.test('the imports read: static, re-exported, side-effect and dynamic ones; ' +
  'none in a comment or a string', async (t) => {
  const text = [
    "import { a } from './a.js'", "import type { B } from '../b.js'", "export * from './c.js'", "import './d.js'",
    "const { e } = await import('./e.js')", 'const f = await import(`../f.js`)', "import {\n  g\n} from './g.js'",
    "// import('./comment.js')", '/* import \'./block.js\' */', 'const text = "await import(\'./string.js\')"',
    'await import(`./` + name + `.js`)', 'await import(name)', "import { h } from 'h'"
  ].join('\n')
  t.same(relativeImports(text), ['./a.js', '../b.js', './c.js', './d.js', './e.js', '../f.js', './g.js'])
})

t.test('no import runs back up a floor', async (t) => {
  const files = [...FLOORS.flat().filter((room) => room.endsWith('.ts')).map((room) => path.join(ROOT, room))]
  for (const room of FLOORS.flat().filter((r) => !r.endsWith('.ts'))) {
    files.push(...await sources(path.join(ROOT, room)))
  }
  let imports = 0
  for (const file of files) {
    const from = floorOf(roomOf(file))
    const text = await readFile(file, 'utf8')
    for (const specifier of relativeImports(text)) {
      const target = roomOf(path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'))
      const to = floorOf(target)
      imports++
      t.ok(to === -1 ? from === 0 : to >= from, `${path.relative(ROOT, file)} → ${specifier}`)
    }
  }
  t.ok(imports > 100, `${imports} imports checked`)
})

/** The relative imports of `file` (type-only, side-effect and dynamic ones too), as the files they name. */
async function importsOf (file: string): Promise<string[]> {
  return relativeImports(await readFile(file, 'utf8'))
    .map((specifier) => path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'))
}

t.test('a list knows nothing of its feed: list-endpoint/ imports nothing from changes/', async (t) => {
  const files = await sources(path.join(ROOT, 'list-endpoint'))
  for (const file of files) {
    const feedImports = (await importsOf(file)).filter((target) => roomOf(target) === 'changes')
    t.same(feedImports.map((target) => path.relative(ROOT, target)), [], path.relative(ROOT, file))
  }
  t.ok(files.length > 10, `${files.length} files checked`)
})

/** Every TypeScript file of the repository: the service, the stand-in, the client, tools, benchmarks and tests. */
async function repositorySources (): Promise<string[]> {
  const entries = await readdir(ROOT, { withFileTypes: true })
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(ROOT, e.name))
  for (const dir of entries.filter((e) => e.isDirectory() && !/^(\.|node_modules$|dist$|coverage$)/.test(e.name))) {
    files.push(...(await sources(path.join(ROOT, dir.name)))
      .filter((file) => !file.split(path.sep).some((part) => part === 'node_modules' || part === 'dist')))
  }
  return files
}

t.test('no import circle in the repository, type-only imports included', async (t) => {
  const files = await repositorySources()
  const graph = new Map<string, string[]>()
  for (const file of files) graph.set(file, (await importsOf(file)).filter((target) => files.includes(target)))
  // Depth first; a file met again while it is still on the path closes a circle.
  const done = new Set<string>()
  const circles: string[] = []
  const visit = (file: string, trail: string[]): void => {
    const at = trail.indexOf(file)
    if (at !== -1) {
      circles.push([...trail.slice(at), file].map((f) => path.relative(ROOT, f)).join(' → '))
      return
    }
    if (done.has(file)) return
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file])
    done.add(file)
  }
  for (const file of files) visit(file, [])
  t.same(circles, [], `${files.length} files`)
  t.ok(files.some((file) => file.includes(`${path.sep}offline-mongodb${path.sep}`)) && files.length > 300,
    'the stand-in, tests and tools are among them')
})

t.test('npm test runs every test file once: in tap\'s run, in the run after it, or in one group', async (t) => {
  const all = (await Promise.all(['test', 'client/test'].map(async (dir) => await sources(path.join(ROOT, dir)))))
    .flat().map((file) => path.relative(ROOT, file)).filter(isTestFile)
  // What tap runs at once (its include and exclude), and the files tools/run-tests.ts runs after them.
  const tapList = execFileSync(NODE, nodeArgs([
    path.join(ROOT, 'node_modules', '.bin', 'tap'), 'list'
  ], { coverage: false }), { cwd: ROOT, encoding: 'utf8' })
  const listed = tapList.split('\n').filter((line) => line !== '')
  const after = tapRuns([])[1]?.filter((word) => word.endsWith('.test.ts')) ?? []
  const grouped = Object.values(GROUPS).flatMap(filesOf)
  const groupFiles = Object.keys(GROUPS).map((name) => `test/_groups/${name}.test.ts`)
  const runs = new Map<string, number>()
  for (const file of [...listed, ...after, ...grouped]) runs.set(file, (runs.get(file) ?? 0) + 1)
  for (const file of all) t.equal(runs.get(file), 1, file)
  for (const file of runs.keys()) t.ok(all.includes(file), `${file} is a test file`)
  for (const file of groupFiles) t.ok(listed.includes(file), `the group ${file} is run`)
  t.ok(grouped.length > 30 && after.length === 3,
    `${grouped.length} files in ${groupFiles.length} groups, ${after.length} after the others`)
})

/** Files a tool writes (npm run generate -w client), not a person. */
const GENERATED = new Set(['client/src/openapi.ts'])
const MAX_LINES = 300

t.test(`no hand-written TypeScript file is longer than ${MAX_LINES} lines`, async (t) => {
  const files = (await repositorySources()).filter((file) => !GENERATED.has(path.relative(ROOT, file)))
  const long: string[] = []
  for (const file of files) {
    const lines = (await readFile(file, 'utf8')).split('\n').length - 1
    if (lines > MAX_LINES) long.push(`${path.relative(ROOT, file)}: ${lines}`)
  }
  t.same(long, [], `${files.length} files`)
})

const MAX_FUNCTION_LINES = 100

/**
 * Each function of `file` (declarations, methods, arrows, expressions,
 * nested ones too) as its first line and its length in lines.
 */
function functionsOf (file: string, text: string): Array<{ line: number, lines: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<{ line: number, lines: number }> = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({ line: first + 1, lines: last - first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

t.test(`no hand-written function is longer than ${MAX_FUNCTION_LINES} lines`, async (t) => {
  // The service, the stand-in, the demo data, the tools, the benchmarks, the client and the
  // tests: a long scenario is told as named steps.
  const files = (await repositorySources()).filter((file) => !GENERATED.has(path.relative(ROOT, file)))
  const long: string[] = []
  let count = 0
  for (const file of files) {
    for (const { line, lines } of functionsOf(file, await readFile(file, 'utf8'))) {
      count++
      if (lines > MAX_FUNCTION_LINES) long.push(`${path.relative(ROOT, file)}:${line}: ${lines}`)
    }
  }
  t.ok(count > 500, `${count} functions read`)
  t.same(long, [], `${files.length} files`)
  t.same(
    functionsOf('a.ts', 'function f () {\n  const g = () => {\n    return 1\n  }\n}\nclass C { m () { return 2 } }\n')
      .map(({ line, lines }) => `${line}:${lines}`),
    ['1:5', '2:3', '6:1'],
    'functions are found and measured'
  )
})

t.test('no test file hooks the root test: in a group, the hook would run around other files\' tests', async (t) => {
  const files = (await repositorySources()).filter((file) => isTestFile(path.relative(ROOT, file)))
  const hooked: string[] = []
  for (const file of files) {
    const text = await readFile(file, 'utf8')
    if (/^t\.(before|after|beforeEach|afterEach)\(/m.test(text)) hooked.push(path.relative(ROOT, file))
  }
  t.same(hooked, [], `${files.length} test files`)
})
