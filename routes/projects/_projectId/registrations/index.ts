import { listAndFeed } from '../../../list-and-feed.js'
import { Registration } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'registrations',
  schema: Registration,
  scoped: true,
  summary: 'List the registrations of a project',
  // "Subscribed to that session on or after 1 April": one subscription must satisfy both.
  example: {
    filter: '{"sessionsSubscriptions":{"$elemMatch":' +
      '{"session":"6608d1b01b51d6e90000012a","subscribedAt":{"$gte":"2024-04-01"}}},' +
      '"$or":[{"role":"participant"},{"steward":{"$exists":true}}]}',
    sort: '-createdAt'
  }
})
