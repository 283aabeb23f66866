import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** The nearest `package.json` above this file: the project root from the sources and from `dist/`. */
function readPackage (): { name: string, version: string } {
  let dir = import.meta.dirname
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${import.meta.dirname}`)
    dir = parent
  }
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
}

export const PACKAGE = readPackage()
