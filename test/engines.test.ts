// `engines` says which Node versions the service supports: the ones CI runs (.ci/run and the
// GitHub workflow), and none that a dependency's own `engines` excludes.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import semver from 'semver'
import t from 'tap'

const ROOT = path.resolve(import.meta.dirname, '..')
const json = async (file: string) => JSON.parse(await readFile(path.join(ROOT, file), 'utf8'))

t.test('no dependency excludes a Node version engines admits', async (t) => {
  const ours: string = (await json('package.json')).engines.node
  t.equal((await json('client/package.json')).engines.node, ours, 'the client says the same')
  const lock = await json('package-lock.json') as {
    packages: Record<string, { engines?: { node?: string } | string[] }>
  }
  let checked = 0
  for (const [name, entry] of Object.entries(lock.packages)) {
    const theirs = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (name === '' || theirs === undefined) continue
    checked++
    t.ok(semver.subset(ours, theirs), `${name.replace(/^.*node_modules\//, '')} (${theirs}) admits ${ours}`)
  }
  t.ok(checked > 50, `${checked} dependencies state their engines`)
})

t.test('CI runs every major version engines admits, and only those', async (t) => {
  const ours: string = (await json('package.json')).engines.node
  const majors = ours.split('||').map((range) => semver.minVersion(range.trim())?.major)
  const ci = await readFile(path.join(ROOT, '.ci/run'), 'utf8')
  t.same([...ci.matchAll(/^use_node (\d+)$/gm)].map((m) => Number(m[1])), majors, '.ci/run')
  const workflow = await readFile(path.join(ROOT, '.github/workflows/ci.yml'), 'utf8')
  for (const [, list] of workflow.matchAll(/node: \[([^\]]*)\]/g)) {
    t.same(list?.split(',').map(Number), majors, 'the GitHub workflow')
  }
})

t.test('the types of Node are those of the oldest version engines admits', async (t) => {
  const ours: string = (await json('package.json')).engines.node
  const oldest = Math.min(...ours.split('||').map((range) => semver.minVersion(range.trim())?.major ?? Infinity))
  const types: string = (await json('package.json')).devDependencies['@types/node']
  t.equal(semver.major(types), oldest, `@types/node ${types}: an API newer than Node ${oldest} does not type-check`)
})
