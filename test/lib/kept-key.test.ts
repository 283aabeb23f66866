// The development key kept in a file (lib/kept-key.ts): made once, read back by the next
// process, readable by its owner only, and one key for processes that start at once.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { DEFAULT_KEY_FILE, KEY_BYTES, keptKey } from '../../lib/kept-key.js'
import { PROJECT_ROOT } from '../../lib/package-info.js'

t.test('the first start writes a key, mode 0600 in a folder of mode 0700; the next reads it back', async (t) => {
  const file = path.join(t.testdir(), 'cache', 'listing-api', 'cursor-key')
  const first = await keptKey(file)
  t.equal(first.created, true)
  t.equal(first.key.length, KEY_BYTES)
  t.equal((await stat(file)).mode & 0o777, 0o600, 'only its owner reads the file')
  t.equal((await stat(path.dirname(file))).mode & 0o777, 0o700, 'nor lists its folder')
  const again = await keptKey(file)
  t.same(again, { key: first.key, created: false }, 'the same key after a restart')
})

t.test('processes that start at once agree on one key', async (t) => {
  const file = path.join(t.testdir(), 'cursor-key')
  const keys = await Promise.all(Array.from({ length: 8 }, async () => await keptKey(file)))
  t.equal(new Set(keys.map(({ key }) => key.toString('hex'))).size, 1, 'one key')
  t.equal(keys.filter(({ created }) => created).length, 1, 'written once')
  t.same(await readdir(path.dirname(file)), ['cursor-key'], 'nothing left aside')
})

t.test('a file that holds no key is replaced by one', async (t) => {
  const file = path.join(t.testdir(), 'cursor-key')
  await writeFile(file, 'not a key\n')
  const replaced = await keptKey(file)
  t.equal(replaced.created, true)
  t.same((await keptKey(file)).key, replaced.key)
})

t.test('npm start keeps its key in the checkout\'s own .dev-keys folder, which git ignores', async (t) => {
  t.equal(DEFAULT_KEY_FILE, path.join(PROJECT_ROOT, '.dev-keys', 'cursor-key'))
  t.match(await readFile(path.join(PROJECT_ROOT, '.gitignore'), 'utf8'), /^\.dev-keys\/$/m)
})
