// Type tests: compiled by client/test/types.test.ts with tsc. Each `@ts-expect-error` marks a
// call that must not compile; tsc fails if it does compile ("unused directive"), so every line
// below is an assertion. `same` asserts that two types are identical.
import { createClient, type Document, type Filter, type Page, type Picked } from '@listing-api/client'

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const same = <A, B>(check: Same<A, B>): Same<A, B> => check
/** Marks a value kept only for its type as used. */
const used = (_value: unknown): void => {}

const client = createClient({ baseUrl: 'http://127.0.0.1:3000' })
const projectId = '65cd7e3007370d3300000000'

export async function filters (): Promise<void> {
  // Each field with its own operators and value types.
  await client.list('sessions', {
    projectId,
    filter: {
      start: { $gte: '2024-06-15' },
      places: { $size: 2, $all: ['65cd7e3007370d3300000001'] },
      'customFields.level': { $in: ['easy', 3, true] }
    }
  })
  await client.list('activities',
    { projectId, filter: { name: { $regex: '^yoga', $options: 'i' }, tags: 'music', active: true } })
  await client.list('registrations', {
    projectId, filter: { 'sessionsSubscriptions.subscribedAt': { $lt: '2024' }, sessionsSubscriptions: { $size: 0 } }
  })
  await client.list('places', { projectId, filter: { maxNumberOfParticipants: { $gt: 100 } } })

  // @ts-expect-error $regex is not an operator of a date field
  await client.list('sessions', { projectId, filter: { start: { $regex: '2024' } } })
  // @ts-expect-error $size is for arrays
  await client.list('activities', { projectId, filter: { name: { $size: 1 } } })
  // @ts-expect-error a number field compares numbers
  await client.list('places', { projectId, filter: { maxNumberOfParticipants: { $gt: '100' } } })
  // @ts-expect-error a boolean field takes booleans
  await client.list('activities', { projectId, filter: { active: 'yes' } })
  // @ts-expect-error $options flags are i, m, s and x
  await client.list('activities', { projectId, filter: { name: { $regex: 'a', $options: 'g' } } })
  // @ts-expect-error unknown field
  await client.list('activities', { projectId, filter: { nmae: 'Yoga' } })
  // @ts-expect-error the project is fixed by the path
  await client.list('activities', { projectId, filter: { project: projectId } })
  // $or and $and of filters, beside field conditions, nested up to three deep.
  await client.list('activities', {
    projectId,
    filter: { active: true, $or: [{ name: { $regex: 'yoga', $options: 'i' } }, { tags: { $in: ['yoga', 'pilates'] } }] }
  })
  await client.list('sessions', {
    projectId,
    filter: {
      $or: [{ $and: [{ $or: [{ start: '2024' }, { places: { $size: 0 } }] }, { 'customFields.room': 'A' }] }, {}]
    }
  })
  // @ts-expect-error an $or has at least one branch
  await client.list('activities', { projectId, filter: { $or: [] } })
  // @ts-expect-error a branch follows the field rules: a boolean field takes booleans
  await client.list('activities', { projectId, filter: { $or: [{ name: 'Yoga' }, { active: 'yes' }] } })
  // @ts-expect-error $or and $and nest at most three deep
  await client.list('activities', { projectId, filter: { $or: [{ $and: [{ $or: [{ $and: [{ name: 'Yoga' }] }] }] }] } })
  // @ts-expect-error $nor is not in the language
  await client.list('activities', { projectId, filter: { $nor: [{ name: 'Yoga' }] } })
  // @ts-expect-error custom fields are named one by one
  await client.list('activities', { projectId, filter: { customFields: 'x' } })
  // @ts-expect-error an array of documents takes $exists, $size and $elemMatch only
  await client.list('registrations', { projectId, filter: { sessionsSubscriptions: { $eq: 'x' } } })
  // $elemMatch: one element satisfies every condition; element fields, or operators of the element type.
  await client.list('registrations', {
    projectId,
    filter: { sessionsSubscriptions: { $elemMatch: { session: projectId, subscribedAt: { $gte: '2024-06-01' } } } }
  })
  await client.list('activities',
    { projectId, filter: { tags: { $elemMatch: { $or: [{ $regex: '^yo', $options: 'i' }, { $eq: 'pilates' }] } } } })
  await client.list('registrations', {
    projectId,
    // @ts-expect-error an element of sessionsSubscriptions has no field 'sesion'
    filter: { sessionsSubscriptions: { $elemMatch: { sesion: projectId } } }
  })
  // @ts-expect-error an element of tags is a string: no $size inside $elemMatch
  await client.list('activities', { projectId, filter: { tags: { $elemMatch: { $size: 1 } } } })
  // @ts-expect-error $elemMatch applies to arrays only
  await client.list('activities', { projectId, filter: { name: { $elemMatch: { $eq: 'Yoga' } } } })
  // @ts-expect-error categories have no tags
  await client.list('categories', { projectId, filter: { tags: 'music' } })

  // A filter type per list, usable on its own.
  const onSessions: Filter<'sessions'> = { end: { $lte: '2024-06-14' } }
  await client.list('sessions', { projectId, filter: onSessions })
}

export async function scopeSortAndFields (): Promise<void> {
  // @ts-expect-error a nested list needs its project
  await client.list('teams', {})
  // @ts-expect-error /projects takes no project
  await client.list('projects', { projectId })
  await client.list('projects', { sort: ['-createdAt', '+name'] })
  // @ts-expect-error sort keys carry their direction
  await client.list('projects', { sort: 'name' })
  // @ts-expect-error arrays do not sort
  await client.list('sessions', { projectId, sort: '+places' })
  // @ts-expect-error fields are the kind's own
  await client.list('teams', { projectId, fields: ['start'] })

  // fields narrows the documents returned.
  const narrow = await client.list('sessions', { projectId, fields: ['name', 'start'] })
  same<typeof narrow, Page<Pick<Document<'sessions'>, '_id' | 'name' | 'start'>>>(true)
  // @ts-expect-error `end` was not asked for
  narrow.data[0]?.end?.toString()
  const whole = await client.list('sessions', { projectId })
  same<typeof whole.data[number], Document<'sessions'>>(true)
  used(whole)
  // Ids only: `_id` may be named, and is all a page then holds.
  const ids = await client.list('registrations', { projectId, fields: ['_id'] })
  same<typeof ids.data[number], Pick<Document<'registrations'>, '_id'>>(true)
  used(ids)
  const custom = await client.list('stewards', { projectId, fields: ['customFields.shirtSize'] })
  same<typeof custom.data[number], Picked<'stewards', ['customFields.shirtSize']>>(true)
  used(custom)

  for await (const team of client.all('teams', { projectId, fields: ['activity'], pageSize: 50 })) {
    same<typeof team, Pick<Document<'teams'>, '_id' | 'activity'>>(true)
    used(team)
  }
  for await (const page of client.pages('public-projects', { pageSize: 10 })) {
    same<typeof page.next, string | undefined>(true)
    used(page)
  }
}

export async function counts (): Promise<void> {
  const answer = await client.counts('registrations',
    { projectId, by: 'role', filter: { createdAt: { $gte: '2024' } }, limit: 10 })
  const first: string | number | boolean | null | undefined = answer.groups[0]?.value
  const sizes: [number, boolean] = [answer.total, answer.more]
  if (first === undefined || sizes[1]) return
  await client.counts('sessions', { projectId, by: 'start:day' })
  await client.counts('registrations', { projectId, by: 'sessionsSubscriptions.session' })
  await client.counts('activities', { projectId, by: 'customFields.level' })
  await client.counts('public-projects', { by: 'public' })
  // @ts-expect-error a date is counted by a period: start:day, start:month or start:year
  await client.counts('sessions', { projectId, by: 'start' })
  // @ts-expect-error the path's project is not a group
  await client.counts('teams', { projectId, by: 'project' })
  // @ts-expect-error a nested list's counts need its project
  await client.counts('teams', { by: 'name' })
}
