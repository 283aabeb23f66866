import { listAndFeed } from '../../../list-and-feed.js'
import { Steward } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'stewards',
  schema: Steward,
  scoped: true,
  summary: 'List the stewards (supervisors) of a project',
  example: { filter: '{"email":{"$regex":"@example.org$"}}', sort: '+name' }
})
