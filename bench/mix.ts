// The benchmark's query mix: the URLs the load generator sends, and for each the driver call
// that the service makes, written out by hand for the floor (no compiler, no framework).
import { ObjectId, type CollationOptions, type Db, type Document, type Sort } from 'mongodb'
import { parseCollation } from '../database/collation.js'
import { DEFAULT_COLLATION } from '../schemas/config.js'
import { projectionOf } from '../list-endpoint/list-schema.js'
import { Activity, Project, Registration, Session } from '../schemas/kinds.js'

export interface MixEntry {
  name: string
  /** The request, as the service receives it. */
  path: string
  collection: string
  /** Nested lists first check that the project exists, as the service does. */
  projectId?: ObjectId
  filter: Document
  sort: Sort
  skip: number
  limit: number
  count: boolean
  projection: Document
  /** The service's collation, which its finds and counts carry (database/collation.ts). */
  collation?: CollationOptions
}

/** The collation the benchmarked service runs with: its default unless COLLATION says otherwise. */
const collation = parseCollation(process.env.COLLATION ?? DEFAULT_COLLATION)
const inCollation = collation === undefined ? {} : { collation }

const json = (value: unknown): string => encodeURIComponent(JSON.stringify(value))

/** How cost grows: pages of 1, 20, 100 and 1000 registrations; $in lists of 1, 10, 50 and 100 session ids. */
export async function buildGrowth (db: Db): Promise<{ pageSize: MixEntry[], inSize: MixEntry[] }> {
  const project = await db.collection('projects').findOne({ public: true }, { sort: { _id: 1 } })
  if (project === null) throw new Error('the database holds no public project: seed it first (npm run seed)')
  const projectId = project._id as ObjectId
  const p = projectId.toHexString()
  const sessions = await db.collection('sessions')
    .find({ project: projectId }, { projection: { _id: 1 }, sort: { _id: 1 }, limit: 100 }).toArray()
  const base = {
    collection: 'registrations',
    projectId,
    sort: { _id: 1 } as Sort,
    skip: 0,
    count: false,
    projection: projectionOf(Registration),
    ...inCollation
  }
  return {
    pageSize: [1, 20, 100, 1000].map((limit) => ({
      ...base,
      name: `${limit} registrations a page`,
      path: `/projects/${p}/registrations?limit=${limit}`,
      filter: { project: projectId },
      limit
    })),
    inSize: [1, 10, 50, 100].map((n): MixEntry => {
      const ids = sessions.slice(0, n).map((s) => s._id as ObjectId)
      return {
        ...base,
        name: `$in ${n} session ids, 20 a page`,
        path: `/projects/${p}/registrations?filter=${json({ 'sessionsSubscriptions.session': { $in: ids } })}&limit=20`,
        filter: { 'sessionsSubscriptions.session': { $in: ids }, project: projectId },
        limit: 20
      }
    }).concat(((): MixEntry => {
      // The same question as `$in 10`, asked as the widest $or the language takes.
      const ids = sessions.slice(0, 10).map((s) => s._id as ObjectId)
      return {
        ...base,
        name: '$or of 10 branches (a session id each), 20 a page',
        path: `/projects/${p}/registrations` +
          `?filter=${json({ $or: ids.map((id) => ({ 'sessionsSubscriptions.session': id })) })}&limit=20`,
        filter: { $or: ids.map((id) => ({ 'sessionsSubscriptions.session': id })), project: projectId },
        limit: 20
      }
    })())
  }
}

/** Reads the ids the mix needs from the seeded database: the first public project and 50 of its sessions. */
export async function buildMix (db: Db): Promise<MixEntry[]> {
  const project = await db.collection('projects').findOne({ public: true }, { sort: { _id: 1 } })
  if (project === null) throw new Error('the database holds no public project: seed it first (npm run seed)')
  const projectId = project._id as ObjectId
  const p = projectId.toHexString()
  const sessions = await db.collection('sessions')
    .find({ project: projectId }, { projection: { _id: 1 }, sort: { _id: 1 }, limit: 50 }).toArray()
  const sessionIds = sessions.map((s) => s._id as ObjectId)
  const festival = await db.collection('sessions').findOne({ project: projectId }, { sort: { start: 1 } })
  const day = (festival?.start as Date | undefined)?.toISOString().slice(0, 10) ?? '2024-06-14'
  const next = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10)

  const entries: MixEntry[] = [
    {
      name: 'sessions in a date range, by start, limit 20',
      path: `/projects/${p}/sessions` +
        `?filter=${json({ start: { $gte: day }, end: { $lt: next } })}&sort=%2Bstart&limit=20`,
      collection: 'sessions',
      projectId,
      filter: { start: { $gte: new Date(day) }, end: { $lt: new Date(next) }, project: projectId },
      sort: { start: 1, _id: 1 },
      skip: 0,
      limit: 20,
      count: false,
      projection: projectionOf(Session)
    },
    {
      name: 'activities by case-insensitive regex on name',
      path: `/projects/${p}/activities?filter=${json({ name: { $regex: 'yoga', $options: 'i' } })}`,
      collection: 'activities',
      projectId,
      filter: { name: { $regex: 'yoga', $options: 'i' }, project: projectId },
      sort: { _id: 1 },
      skip: 0,
      limit: 100,
      count: false,
      projection: projectionOf(Activity)
    },
    {
      name: 'registrations by sessionsSubscriptions.session $in 50 ids',
      path: `/projects/${p}/registrations?filter=${json({ 'sessionsSubscriptions.session': { $in: sessionIds } })}`,
      collection: 'registrations',
      projectId,
      filter: { 'sessionsSubscriptions.session': { $in: sessionIds }, project: projectId },
      sort: { _id: 1 },
      skip: 0,
      limit: 100,
      count: false,
      projection: projectionOf(Registration)
    },
    {
      name: 'public projects',
      path: '/projects/public',
      collection: 'projects',
      filter: { public: true },
      sort: { _id: 1 },
      skip: 0,
      limit: 100,
      count: false,
      projection: projectionOf(Project)
    },
    {
      name: 'active activities with count=true',
      path: `/projects/${p}/activities?filter=${json({ active: true })}&sort=-createdAt&limit=10&count=true`,
      collection: 'activities',
      projectId,
      filter: { active: { $eq: true }, project: projectId },
      sort: { createdAt: -1, _id: 1 },
      skip: 0,
      limit: 10,
      count: true,
      projection: projectionOf(Activity)
    }
  ]
  return entries.map((entry) => ({ ...entry, ...inCollation }))
}

/** The language section's loads (bench/http-language.ts): names sorted, one subscription against two keys. */
export async function buildLanguage (
  db: Db
): Promise<{ sortByName: MixEntry, elemMatch: MixEntry, twoKeys: MixEntry }> {
  const project = await db.collection('projects').findOne({ public: true }, { sort: { _id: 1 } })
  if (project === null) throw new Error('the database holds no public project: seed it first (npm run seed)')
  const projectId = project._id as ObjectId
  const p = projectId.toHexString()
  const session = await db.collection('sessions')
    .findOne({ project: projectId }, { projection: { _id: 1 }, sort: { _id: 1 } })
  const sessionId = session?._id as ObjectId
  const from = '2024-05-01'
  const base = {
    collection: 'registrations',
    projectId,
    sort: { _id: 1 } as Sort,
    skip: 0,
    limit: 20,
    count: false,
    projection: projectionOf(Registration),
    ...inCollation
  }
  const one = { session: sessionId.toHexString(), subscribedAt: { $gte: from } }
  return {
    sortByName: {
      ...base,
      name: 'registrations by name, 100 a page',
      path: `/projects/${p}/registrations?sort=%2Bname&limit=100`,
      filter: { project: projectId },
      sort: { name: 1, _id: 1 },
      limit: 100
    },
    elemMatch: {
      ...base,
      name: 'one subscription: $elemMatch on session and date, 20 a page',
      path: `/projects/${p}/registrations?filter=${json({ sessionsSubscriptions: { $elemMatch: one } })}&limit=20`,
      filter: {
        sessionsSubscriptions: { $elemMatch: { session: sessionId, subscribedAt: { $gte: new Date(from) } } },
        project: projectId
      }
    },
    twoKeys: {
      ...base,
      name: 'the two keys (sessionsSubscriptions.session, .subscribedAt)',
      path: `/projects/${p}/registrations?filter=${json({
        'sessionsSubscriptions.session': one.session, 'sessionsSubscriptions.subscribedAt': one.subscribedAt
      })}&limit=20`,
      filter: {
        'sessionsSubscriptions.session': sessionId,
        'sessionsSubscriptions.subscribedAt': { $gte: new Date(from) },
        project: projectId
      }
    }
  }
}
