// .github/workflows/ci.yml, checked without GitHub: the suite on one-member replica sets of the
// three MongoDB versions the service supports, the feed tests through a sharded cluster whose
// collections have images and are sharded, and the stand-in runs (there and in .ci/run) that
// ask for the stand-in by name instead of downloading mongod.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { allowedValues } from '../../schemas/config.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8')

interface Step { name?: string, run?: string, uses?: string }
interface Job { env?: Record<string, string | number>, strategy?: { matrix: Record<string, unknown[]> }, steps: Step[] }
const { jobs } = parse(read('.github/workflows/ci.yml')) as { jobs: Record<string, Job> }
const script = (job: Job): string => job.steps.map((step) => step.run ?? '').join('\n')
const runs = (job: Job, command: string): boolean => job.steps.some((step) => step.run?.trim() === command)

t.test('the whole suite on one-member replica sets of MongoDB 6.0, 7.0 and 8.0', async (t) => {
  const { mongodb } = jobs
  if (mongodb === undefined) throw new Error('no job mongodb')
  t.same(mongodb.strategy?.matrix.mongodb, ['6.0', '7.0', '8.0'])
  t.match(script(mongodb), /docker run .* mongo:\$\{\{ matrix\.mongodb \}\} --replSet rs0/)
  t.match(script(mongodb), /rs\.initiate\(\{ _id: 'rs0', members: \[\{ _id: 0, host: '127\.0\.0\.1:27017' \}\] \}\)/)
  t.match(mongodb.env?.MONGODB_URI, /^mongodb:\/\/127\.0\.0\.1:27017\//)
  t.ok(runs(mongodb, 'npm test'), 'npm test')
})

t.test('the stand-in job asks for the stand-in by name and downloads no mongod; so does .ci/run', async (t) => {
  const standIn = jobs['stand-in']
  if (standIn === undefined) throw new Error('no job stand-in')
  t.equal(standIn.env?.EMBEDDED_DATABASE, 'stand-in')
  t.match(allowedValues('EMBEDDED_DATABASE'), 'stand-in', 'a value the service takes')
  t.equal(String(standIn.env?.MONGOMS_DISABLE_POSTINSTALL), '1', 'mongodb-memory-server\'s postinstall skipped')
  t.equal(standIn.env?.MONGODB_URI, undefined, 'on the embedded database')
  t.ok(runs(standIn, 'npm test'), 'npm test')
  t.match(read('.ci/run'), /^export EMBEDDED_DATABASE=stand-in MONGOMS_DISABLE_POSTINSTALL=1$/m, '.ci/run')
})

t.test('the feed tests through a sharded cluster: config servers, two shards, mongos', async (t) => {
  const { sharded } = jobs
  if (sharded === undefined) throw new Error('no job sharded')
  const text = script(sharded)
  t.match(text, /mongo:8\.0 mongod --configsvr --replSet cfg/, 'a config server replica set')
  t.match(text, /rs\.initiate\(\{ _id: 'cfg', configsvr: true/)
  t.equal(text.match(/mongod --shardsvr --replSet sh\d/g)?.length, 2, 'two shard replica sets')
  t.match(text, /mongo:8\.0 mongos --configdb cfg\/cfg:27019/, 'a mongos of those config servers')
  t.match(text, /sh\.addShard\('sh1\/sh1:27018'\); sh\.addShard\('sh2\/sh2:27018'\)/)
  t.match(text, /db\.createCollection\(name, \{ changeStreamPreAndPostImages: \{ enabled: true \} \}\)/, 'images on')
  t.match(text, /sh\.shardCollection\('listing\.' \+ name, \{ _id: 'hashed' \}\)/, 'the collections sharded')
  t.match(sharded.env?.MONGODB_URI, /^mongodb:\/\/127\.0\.0\.1:27017\/$/, 'the tests reach mongos')
})

t.test('every feed test file runs in the sharded job', async (t) => {
  const command = jobs.sharded?.steps.map((step) => step.run ?? '').find((run) => run.startsWith('npx tap ')) ?? ''
  const patterns = command.split(/\s+/).slice(2)
    .map((arg) => new RegExp(`^${arg.replaceAll('.', '\\.').replaceAll('*', '[^/]*')}$`))
  const feedFiles = ['test', 'client/test'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .map((file) => path.join(dir, file))
      .filter((file) => file.endsWith('.test.ts') && /^\s*await prepareFeeds\(/m.test(read(file))))
  t.ok(feedFiles.length >= 6, `${feedFiles.length} files prepare feeds`)
  for (const file of feedFiles) t.ok(patterns.some((pattern) => pattern.test(file)), `${file} is run`)
})
