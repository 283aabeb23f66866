// A service-to-service sync job: copies one project's registrations into a local JSON file with
// the typed client. It walks the list page by page; after each page it saves the page's cursor, so
// that a run that is stopped (a deploy, a crash) resumes where it stopped instead of starting over.
// The client retries on 503 and 429 as the service asks (Retry-After), so a database failover
// during the walk only slows it down.
//
//   LISTING_API_URL=http://127.0.0.1:3000 PROJECT_ID=65cd7e3007370d3300000000 \
//   STATE_FILE=registrations.json [LISTING_API_TOKEN=…] npx tsx examples/sync-registrations.ts
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createClient, ListingProblem, type Picked } from '@listing-api/client'

const FIELDS = ['user', 'steward', 'role', 'sessionsSubscriptions', 'updatedAt'] as const
type Registration = Picked<'registrations', typeof FIELDS>

interface State {
  /** Where an unfinished walk stops: the `next` of the last page saved. */
  cursor?: string
  /** The registrations of the walk under way, by id; the last finished walk's when none is. */
  registrations: Record<string, Registration>
}

const { LISTING_API_URL = 'http://127.0.0.1:3000', PROJECT_ID, STATE_FILE = 'registrations.json' } = process.env
if (PROJECT_ID === undefined) {
  console.error('PROJECT_ID is required')
  process.exit(2)
}

function load (): State {
  return existsSync(STATE_FILE) ? JSON.parse(readFileSync(STATE_FILE, 'utf8')) as State : { registrations: {} }
}

/** Written aside, then renamed: a stop mid-write never leaves half a file. */
function save (state: State): void {
  writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state))
  renameSync(`${STATE_FILE}.tmp`, STATE_FILE)
}

const client = createClient({
  baseUrl: LISTING_API_URL,
  // Read for every request, so that a token renewed by a sidecar is picked up at once.
  token: () => process.env.LISTING_API_TOKEN,
  retry: { attempts: 8, totalMs: 120_000 },
  onRetry: ({ attempt, delayMs, reason }) => console.error(`retry ${attempt} in ${delayMs} ms: ${reason}`)
})

const state = load()
// A finished walk starts over into a fresh copy; an unfinished one carries on.
const registrations: Record<string, Registration> = state.cursor === undefined ? {} : state.registrations
const runId = randomUUID()
let pages = 0
try {
  for await (const page of client.pages('registrations', {
    projectId: PROJECT_ID, fields: FIELDS, pageSize: 200, after: state.cursor
  }, { requestId: `sync-${runId}` })) {
    for (const registration of page.data) registrations[registration._id] = registration
    pages++
    save({ cursor: page.next, registrations })
  }
} catch (error) {
  if (error instanceof ListingProblem) {
    console.error(`stopped: ${error.status} ${error.code}: ${error.detail} (request ${error.requestId ?? '?'}); ` +
      'the next run resumes')
    process.exit(1)
  }
  throw error
}
save({ registrations })
console.log(`synced ${Object.keys(registrations).length} registrations of project ${PROJECT_ID} in ${pages} pages`)
