// The client follows a change feed as an async iterator: the listing, then the changes, a copy
// that equals the list; a saved token resumes; on 410 it calls onExpired and lists again.
import type { AddressInfo } from 'node:net'
import { ObjectId, type Db } from 'mongodb'
import t from 'tap'
import { build } from '../../test/helpers/build.js'
import { prepareFeeds, requireChangeStreams } from '../../test/helpers/feeds.js'
import { createClient, type ChangeEvent } from '../src/index.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(60_000)

t.test('changes(): a copy kept from the events equals the list; a token resumes; 410 relists', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-client-feed-secret-of-32-bytes-long' } })
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  const registrations = db.collection('registrations')
  await registrations.insertMany(Array.from({ length: 12 }, (_, i) => ({
    project, role: i % 3 === 0 ? 'volunteer' : 'guest'
  })))
  const client = createClient({ baseUrl: `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}` })
  const projectId = project.toHexString()
  const copy = new Map<string, unknown>()
  const apply = (event: ChangeEvent<'registrations', readonly ['role']>): void => {
    if (event.type === 'upsert') copy.set(event._id, event.document)
    else copy.delete(event._id)
  }
  const expected = async () => (await client.list('registrations',
    { projectId, filter: { role: 'volunteer' }, fields: ['role'], limit: 1000 })).data
  let saved: string | undefined
  let synced = false
  let expiredCalls = 0
  /** Follows until the copy equals the list after an answer (or gives up after `ms`). */
  const followUntilEqual = async (since: string | undefined, ms: number): Promise<boolean> => {
    const stop = new AbortController()
    const deadline = setTimeout(() => { stop.abort() }, ms)
    let equal = false
    const onToken = async (next: string, isSynced: boolean): Promise<void> => {
      saved = next
      synced = isSynced
      if (!isSynced) return
      const list = await expected()
      equal = list.length === copy.size &&
        list.every((doc) => JSON.stringify(copy.get(doc._id)) === JSON.stringify(doc))
      if (equal) stop.abort()
    }
    const options = {
      projectId,
      filter: { role: 'volunteer' },
      fields: ['role'] as const,
      limit: 3,
      wait: 1,
      since,
      onToken,
      onExpired: () => { expiredCalls++; copy.clear() }
    }
    try {
      for await (const event of client.changes('registrations', options, { signal: stop.signal })) apply(event)
    } catch (error) {
      if (!stop.signal.aborted) throw error
    } finally {
      clearTimeout(deadline)
    }
    return equal
  }
  t.ok(await followUntilEqual(undefined, 10_000), 'the listing builds the copy')
  t.ok(synced && saved !== undefined)

  // Changes while the program is away; it resumes from its saved token.
  const some = await registrations.find({ project, role: 'volunteer' }).toArray()
  await registrations.updateOne({ _id: some[0]?._id }, { $set: { role: 'guest' } })
  await registrations.deleteOne({ _id: some[1]?._id })
  await registrations.insertOne({ project, role: 'volunteer' })
  t.ok(await followUntilEqual(saved, 10_000), 'resumed from the saved token, the copy equals the list again')
  t.equal(expiredCalls, 0)

  // The history is lost: onExpired, then a relist from scratch.
  const old = saved
  await db.dropDatabase()
  await prepareFeeds(db)
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  await registrations.insertOne({ project, role: 'volunteer' })
  t.ok(await followUntilEqual(old, 10_000), 'after 410 the copy was rebuilt')
  t.equal(expiredCalls, 1, 'onExpired was called once')
  t.equal(copy.size, 1)
})

t.test('changes(): a token the service cannot read (a restart with another key) ' +
  'calls onExpired and lists again', async (t) => {
  const before = await build(t, { config: { CURSOR_SECRET: 'the-key-of-the-first-start-32-bytes!' } })
  const db = before.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  await db.collection('registrations').insertMany([{ project, role: 'volunteer' }, { project, role: 'volunteer' }])
  const projectId = project.toHexString()
  const saved = (await before.inject(`/projects/${projectId}/registrations/changes?fields=role`)).json().next as string

  // The service again, on the same database, signing with another key.
  const after = await build(t,
    { config: { CURSOR_SECRET: 'the-key-of-the-next-start-32-bytes!!', MONGODB_DB: before.config.MONGODB_DB } })
  await after.listen({ port: 0, host: '127.0.0.1' })
  const refused = (await after.inject(`/projects/${projectId}/registrations/changes?fields=role&since=${saved}`)).json()
  t.match(refused, {
    status: 400, code: 'INVALID_CURSOR', errors: [{ param: 'since' }], detail: /start again without since/
  }, 'the answer says what to do')

  const client = createClient({ baseUrl: `http://127.0.0.1:${(after.server.address() as AddressInfo).port}` })
  const copy = new Map<string, unknown>([['a document of the old copy', {}]])
  let expiredCalls = 0
  const stop = new AbortController()
  const options = {
    projectId,
    fields: ['role'] as const,
    wait: 1,
    since: saved,
    onExpired: () => { expiredCalls++; copy.clear() },
    onToken: (_next: string, synced: boolean) => { if (synced) stop.abort() }
  }
  try {
    for await (const event of client.changes('registrations', options, { signal: stop.signal })) {
      if (event.type === 'upsert') copy.set(event._id, event.document)
      else copy.delete(event._id)
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error
  }
  t.equal(expiredCalls, 1, 'onExpired was called once')
  const listed = (await client.list('registrations', { projectId, fields: ['role'] })).data
  t.same([...copy.keys()].sort(), listed.map((doc) => doc._id).sort(), 'the copy was listed again from scratch')
})
