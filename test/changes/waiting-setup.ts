// What test/changes/waiting*.test.ts start from: an app, and a project of its own whose
// registrations feed a copy has caught up with.
import type { Db } from 'mongodb'
import type { Test } from 'tap'
import type { Config } from '../../schemas/config.js'
import { build } from '../helpers/build.js'
import { FeedCopy, feedProject } from '../helpers/feeds.js'

export const CURSOR_SECRET = 'a-waiting-test-secret-of-32-bytes-long'

export async function setUp (t: Test, config: Partial<Config> = {}) {
  const fastify = await build(t, { config: { CURSOR_SECRET, ...config } })
  const db = fastify.mongo.db as Db
  const { project, path } = await feedProject(db, 'registrations')
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await fastify.inject(url))
  return { fastify, db, project, path, copy }
}
