// What a feed answers for each server error its database work may meet (no database: the
// classifying functions alone, in the feed's order: history lost, then what the deployment
// lacks, then what every request answers for a database fault). Never a 500.
import { createRequire } from 'node:module'
import { MongoDriverError, MongoServerError } from 'mongodb'
import t from 'tap'
import { isHistoryLost, unavailableReason } from '../../changes/change-events.js'
import { classifyDatabaseError } from '../../database/classify-error.js'

const serverError = (code: number, codeName: string, errmsg = codeName): MongoServerError =>
  new MongoServerError({ ok: 0, code, codeName, errmsg })

/** The status and code a feed answers for `error`, with the detail (changes/feed-problems.ts, plugins/errors.ts). */
function feedAnswer (error: MongoServerError): { status: number, code: string, detail: string } {
  if (isHistoryLost(error)) return { status: 410, code: 'CHANGES_EXPIRED', detail: 'start again without since' }
  const reason = unavailableReason(error)
  if (reason !== undefined) return { status: 503, code: 'CHANGES_UNAVAILABLE', detail: reason }
  const problem = classifyDatabaseError(error)
  return problem === undefined
    ? { status: 500, code: 'INTERNAL_ERROR', detail: '' }
    : { status: problem.status, code: problem.code, detail: problem.detail }
}

const cases: Array<[string, MongoServerError, { status: number, code: string, detail?: RegExp }]> = [
  ['FailedToSatisfyReadPreference 133 (no member the read preference allows, through mongos)',
    serverError(133, 'FailedToSatisfyReadPreference'), { status: 503, code: 'DATABASE_UNAVAILABLE' }],
  ['CappedPositionLost 136 (the oplog was overwritten under the stream)', serverError(136, 'CappedPositionLost'),
    { status: 410, code: 'CHANGES_EXPIRED' }],
  ['Unauthorized 13 (the service\'s user lacks changeStream or find)',
    serverError(13, 'Unauthorized', 'not authorized on app to execute command { aggregate: "sessions" }'),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /privileges.*changeStream and find/ }],
  ['ChangeStreamNotEnabled 376', serverError(376, 'ChangeStreamNotEnabled'),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /not enabled/ }],
  ['ChangeStreamHistoryLost 286', serverError(286, 'ChangeStreamHistoryLost'),
    { status: 410, code: 'CHANGES_EXPIRED' }],
  ['ChangeStreamFatalError 280', serverError(280, 'ChangeStreamFatalError'), { status: 410, code: 'CHANGES_EXPIRED' }],
  ['a standalone server, 40573', serverError(40573, 'Location40573'),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /standalone/ }],
  ['MongoDB 5.0 refusing fullDocument: "whenAvailable" (BadValue 2)',
    serverError(2, 'BadValue',
      'Enumeration value \'whenAvailable\' for field \'$changeStream.fullDocument\' is not a valid value.'),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /6\.0 or later/ }],
  ['MongoDB 5.0 not knowing fullDocumentBeforeChange (40415)',
    serverError(40415, 'Location40415', 'BSON field \'$changeStream.fullDocumentBeforeChange\' is an unknown field.'),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /6\.0 or later/ }],
  ['an election (NotWritablePrimary 10107)', serverError(10107, 'NotWritablePrimary'),
    { status: 503, code: 'DATABASE_UNAVAILABLE' }],
  ['a time limit (MaxTimeMSExpired 50)', serverError(50, 'MaxTimeMSExpired'), { status: 503, code: 'QUERY_TIMEOUT' }]
]

for (const [what, error, expected] of cases) {
  t.test(what, async (t) => {
    const answer = feedAnswer(error)
    t.match(answer, expected, `${answer.status} ${answer.code}`)
  })
}

t.test('a BadValue about anything else is not taken for lost history: relisting would not cure it', async (t) => {
  const error = serverError(2, 'BadValue', '$in needs an array')
  t.equal(isHistoryLost(error), false)
  t.equal(unavailableReason(error), undefined)
  t.match(feedAnswer(error), { status: 400, code: 'INVALID_VALUE' })
})

t.test('lists answer the same database state errors alike, never 500', async (t) => {
  t.match(classifyDatabaseError(serverError(133, 'FailedToSatisfyReadPreference')),
    { status: 503, code: 'DATABASE_UNAVAILABLE' })
  t.match(classifyDatabaseError(serverError(13, 'Unauthorized')),
    { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /privilege/ })
  for (const [code, name] of [[202, 'NetworkInterfaceExceededTimeLimit'], [24, 'LockTimeout']] as const) {
    t.match(classifyDatabaseError(serverError(code, name)), { status: 503, code: 'QUERY_TIMEOUT' }, name)
  }
  for (const [code, name] of [[175, 'QueryPlanKilled'], [13388, 'StaleConfig'], [150, 'StaleEpoch']] as const) {
    t.match(classifyDatabaseError(serverError(code, name)), { status: 503, code: 'DATABASE_UNAVAILABLE' }, name)
  }
  t.match(classifyDatabaseError(serverError(12345, 'SomethingNew')),
    { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /does not know/ }, 'a code the service does not know')
  t.match(feedAnswer(serverError(12345, 'SomethingNew')), { status: 503 }, 'a feed too')
})

t.test('a connection checkout that waited out its time is a time limit, not an outage', async (t) => {
  // The driver's own classes (not exported: their module is read directly, so that a rename, or
  // a closed pool's error that is no driver error with an address, fails here).
  const { WaitQueueTimeoutError, PoolClosedError } = createRequire(import.meta.url)('mongodb/lib/cmap/errors.js') as {
    WaitQueueTimeoutError: new (message: string, address: string) => Error
    PoolClosedError: new (pool: { address: string }) => Error
  }
  const error = new WaitQueueTimeoutError('Timed out while checking out a connection from connection pool',
    '127.0.0.1:27017')
  t.match(classifyDatabaseError(error), { status: 503, code: 'QUERY_TIMEOUT', detail: /busy/ })
  const closed = new PoolClosedError({ address: '127.0.0.1:27017' })
  t.ok(closed instanceof MongoDriverError, 'a closed pool\'s error is a driver error')
  t.match(classifyDatabaseError(closed), { status: 503, code: 'DATABASE_UNAVAILABLE' },
    'the pool\'s other errors stay an outage')
})
