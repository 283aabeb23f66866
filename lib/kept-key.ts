// A signing key kept in a file, for development: outside production without CURSOR_SECRET,
// the cursors and feed tokens of one `npm start` are still good after the next
// (plugins/cursors.ts). Only its owner may read the file (mode 0600, in a folder of mode 0700).
import { randomBytes } from 'node:crypto'
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { PROJECT_ROOT } from './package-info.js'

/** The key's length: HMAC-SHA256's block is 64 bytes, its output 32; RFC 2104 §3 asks at least the output's length. */
export const KEY_BYTES = 32

/**
 * Where `npm start` keeps its key: beside the development token key pair (`npm run token`), in
 * the checkout's own `.dev-keys/` (ignored by git), so that two checkouts never share one.
 */
export const DEFAULT_KEY_FILE = path.join(PROJECT_ROOT, '.dev-keys', 'cursor-key')

/** The key a file holds (base64url text of KEY_BYTES bytes), or undefined when there is none or it is not one. */
async function readKey (file: string): Promise<Buffer | undefined> {
  let text: string
  try {
    text = (await readFile(file, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const key = Buffer.from(text, 'base64url')
  return key.length === KEY_BYTES && key.toString('base64url') === text ? key : undefined
}

/**
 * The key kept in `file`, made (from node:crypto's randomBytes) when there is none. Two
 * processes that start at once agree on one: each writes its own key aside, and only one can
 * link it into place; the other reads the winner's. A file that holds no key is replaced.
 */
export async function keptKey (file: string): Promise<{ key: Buffer, created: boolean }> {
  const kept = await readKey(file)
  if (kept !== undefined) return { key: kept, created: false }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  const key = randomBytes(KEY_BYTES)
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`
  await writeFile(aside, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' })
  try {
    try {
      await link(aside, file)
      return { key, created: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const theirs = await readKey(file)
    if (theirs !== undefined) return { key: theirs, created: false }
    await rename(aside, file)
    return { key, created: true }
  } finally {
    await rm(aside, { force: true })
  }
}
