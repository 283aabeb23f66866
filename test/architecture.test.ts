// docs/architecture.md's floors, held: a room imports only from its own floor or below.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'

const ROOT = path.resolve(import.meta.dirname, '..')

/**
 * Floors from the top; a top-level file or folder not named here is outside the service
 * (the stand-in, the demo data), and only the process floor may reach it.
 */
const FLOORS: string[][] = [
  ['server.ts', 'process'],
  ['app.ts', 'routes'],
  ['plugins'],
  ['list-endpoint', 'changes'],
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

t.test('no import runs back up a floor', async (t) => {
  const files = [...FLOORS.flat().filter((room) => room.endsWith('.ts')).map((room) => path.join(ROOT, room))]
  for (const room of FLOORS.flat().filter((r) => !r.endsWith('.ts'))) files.push(...await sources(path.join(ROOT, room)))
  let imports = 0
  for (const file of files) {
    const from = floorOf(roomOf(file))
    const text = await readFile(file, 'utf8')
    for (const [, specifier] of text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)) {
      const target = roomOf(path.resolve(path.dirname(file), specifier as string).replace(/\.js$/, '.ts'))
      const to = floorOf(target)
      imports++
      t.ok(to === -1 ? from === 0 : to >= from, `${path.relative(ROOT, file)} → ${specifier as string}`)
    }
  }
  t.ok(imports > 100, `${imports} imports checked`)
})
