// Deterministic festival data for every collection the service lists, with the gaps real
// data has: optional fields are sometimes missing.
import type { Document, ObjectId } from 'mongodb'
import { SeededRandom } from './random.js'
import { ACTIVITIES, CATEGORIES, FIRST_NAMES, LAST_NAMES, PLACES, PROJECTS, ROLES, TAGS } from './vocabulary.js'

export type DemoData = Record<
  'projects' | 'categories' | 'activities' | 'places' | 'sessions' | 'stewards' | 'teams' | 'registrations',
  Document[]
>

export const PER_PROJECT = {
  categories: 8,
  activities: 60,
  places: 20,
  sessions: 300,
  stewards: 40,
  teams: 10,
  registrations: 1000
}

const HOUR = 3600_000
const DAY = 24 * HOUR

/** A name and the e-mail address that goes with it. */
function person (random: SeededRandom): { name: string, email: string } {
  const first = random.pick(FIRST_NAMES)
  const last = random.pick(LAST_NAMES)
  return { name: `${first} ${last}`, email: `${first}.${last}${random.int(1, 99)}@example.org`.toLowerCase() }
}

export function generateDemoData ({ seed = 20240601, scale = 1 } = {}): DemoData {
  const random = new SeededRandom(seed)
  const data: DemoData = {
    projects: [], categories: [], activities: [], places: [], sessions: [], stewards: [], teams: [], registrations: []
  }
  const count = (kind: keyof typeof PER_PROJECT) => Math.max(1, Math.round(PER_PROJECT[kind] * scale))

  for (const spec of PROJECTS) {
    const festivalStart = new Date(Date.UTC(spec.year, spec.month - 1, spec.day))
    let clock = festivalStart.getTime() - 120 * DAY
    /** Creation times move forward, so `_id` order follows `createdAt` as it does in MongoDB. */
    const created = () => {
      clock += random.int(1, 6) * HOUR
      return new Date(clock)
    }
    const common = (extra: Document): Document => {
      const createdAt = created()
      const doc: Document = { _id: random.objectId(createdAt), ...extra, createdAt }
      if (random.chance(0.7)) doc.updatedAt = new Date(createdAt.getTime() + random.int(1, 30) * DAY)
      return doc
    }

    const project = common({
      name: spec.name,
      email: `contact@${spec.slug}.example.org`,
      public: spec.public,
      customFields: { city: spec.city, edition: spec.edition }
    })
    data.projects.push(project)
    const scoped = (extra: Document) => common({ project: project._id, ...extra })

    const categories = CATEGORIES.slice(0, count('categories')).map((name) =>
      scoped({ name, customFields: { color: random.pick(['red', 'blue', 'green', 'amber', 'violet']) } }))
    const places = Array.from({ length: count('places') }, (_, i) => {
      const doc = scoped({ name: `${random.pick(PLACES)} ${i + 1}`, customFields: { indoor: random.chance(0.4) } })
      if (random.chance(0.85)) doc.maxNumberOfParticipants = random.pick([12, 20, 30, 50, 80, 150, 400, 1200])
      return doc
    })
    const stewards = Array.from({ length: count('stewards') }, () =>
      scoped({ ...person(random), customFields: { shirtSize: random.pick(['S', 'M', 'L', 'XL']) } }))
    const activities = Array.from({ length: count('activities') }, (_, i) => {
      const [name, description] = random.pick(ACTIVITIES)
      const doc = scoped({
        name: i < ACTIVITIES.length ? name : `${name} ${Math.floor(i / ACTIVITIES.length) + 1}`,
        category: random.pick(categories)._id,
        tags: random.sample(TAGS, random.int(0, 4)),
        active: random.chance(0.8),
        customFields: {
          level: random.pick(['beginner', 'intermediate', 'advanced']), durationMinutes: random.pick([45, 60, 90, 120])
        }
      })
      if (random.chance(0.75)) doc.description = description
      if (random.chance(0.3)) doc.email = `${name.split(' ')[0]?.toLowerCase()}@${spec.slug}.example.org`
      return doc
    })
    const sessions = Array.from({ length: count('sessions') }, () => {
      const activity = random.pick(activities)
      const start = new Date(festivalStart.getTime() + random.int(0, spec.days - 1) * DAY + random.int(9, 21) * HOUR +
        random.pick([0, 15, 30, 45]) * 60_000)
      const doc = scoped({
        activity: activity._id,
        start,
        end: new Date(start.getTime() + random.pick([45, 60, 90, 120, 180]) * 60_000),
        places: random.sample(places, random.int(1, 2)).map((place) => place._id as ObjectId),
        stewards: random.sample(stewards, random.int(0, 3)).map((steward) => steward._id as ObjectId)
      })
      if (random.chance(0.6)) doc.name = `${String(activity.name)} – ${start.toISOString().slice(5, 10)}`
      return doc
    })
    const teams = Array.from({ length: count('teams') }, (_, i) => scoped({
      name: `Team ${i + 1}`, activity: random.pick(activities)._id, customFields: { radioChannel: random.int(1, 16) }
    }))
    const users = Array.from({ length: Math.ceil(count('registrations') * 0.8) }, () =>
      random.objectId(new Date(clock)))
    const registrations = Array.from({ length: count('registrations') }, (_, i) => {
      const subscribed = random.sample(sessions, random.int(0, 5))
      const doc = scoped({
        ...person(random),
        user: users[i % users.length],
        role: random.pick(ROLES),
        sessionsSubscriptions: subscribed.map((session) => ({
          session: session._id, subscribedAt: new Date((session.start as Date).getTime() - random.int(1, 60) * DAY)
        })),
        customFields: { ticket: random.pick(['day', 'weekend', 'full']), newsletter: random.chance(0.5) },
        // Stored for the platform's own login, never declared in the listing schemas: it must never be listed.
        passwordHash: `$2b$10$${random.next().toString(36).slice(2).padEnd(22, 'x')}`
      })
      if (random.chance(0.3)) doc.steward = random.pick(stewards)._id
      return doc
    })

    const made = { categories, places, stewards, activities, sessions, teams, registrations }
    for (const [kind, docs] of Object.entries(made)) data[kind as keyof DemoData].push(...docs)
  }
  return data
}
