// compose.yaml, checked without Docker: MongoDB 8 as a replica set with a health check that
// initiates it, the service built from the Dockerfile once that is healthy and seeded, a seed
// job that runs a script the build stage really has, and settings the service really reads.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { ConfigSchema } from '../../schemas/config.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'))
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
const { mongodb, seed, api } = compose.services

t.test('MongoDB 8, a single-node replica set initiated by its health check', async (t) => {
  t.match(mongodb.image, /^mongo:8\./)
  t.ok(mongodb.command.includes('--replSet'))
  const check = mongodb.healthcheck.test.join(' ')
  t.match(check, /rs\.initiate/)
  t.match(check, /isWritablePrimary/)
})

t.test('the seed job: the build stage, a script it compiles, after MongoDB is healthy', async (t) => {
  t.equal(seed.build.target, 'build')
  t.match(dockerfile, /^FROM \S+ AS build$/m, 'the Dockerfile has that stage')
  const script = seed.command.at(-1) as string
  t.ok(existsSync(path.join(ROOT, script.replace(/^dist\//, '').replace(/\.js$/, '.ts'))),
    `${script} is compiled from a source file`)
  t.equal(seed.depends_on.mongodb.condition, 'service_healthy')
})

t.test('the service: the image, after the seed, on loopback ports, with real settings', async (t) => {
  t.equal(api.build, '.')
  t.equal(api.depends_on.seed.condition, 'service_completed_successfully')
  t.equal(api.depends_on.mongodb.condition, 'service_healthy')
  t.same(api.ports, ['127.0.0.1:3000:3000', '127.0.0.1:9464:9464'])
  for (const key of Object.keys(api.environment)) t.ok(key in ConfigSchema.properties, `${key} is a setting`)
  t.match(api.environment.MONGODB_URI, /^mongodb:\/\/mongodb:27017\/\?replicaSet=rs0$/)
  t.ok(api.environment.CURSOR_SECRET.length >= 32, 'a cursor secret long enough for production mode')
})
