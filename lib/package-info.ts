import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** The folder of the nearest `package.json` above this file: the project root from the sources and from `dist/`. */
function projectRoot (): string {
  let dir = import.meta.dirname
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${import.meta.dirname}`)
    dir = parent
  }
  return dir
}

export const PROJECT_ROOT = projectRoot()

export const PACKAGE: { name: string, version: string } =
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'))
