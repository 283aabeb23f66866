import { listAndFeed } from '../../../list-and-feed.js'
import { Registration } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'registrations',
  schema: Registration,
  scoped: true,
  summary: 'List the registrations of a project',
  example: { filter: '{"createdAt":{"$gte":"2024"},"$or":[{"role":"volunteer"},{"steward":{"$exists":true}}]}', sort: '-createdAt' }
})
