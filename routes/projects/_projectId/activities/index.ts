import { listAndFeed } from '../../../list-and-feed.js'
import { Activity } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'activities',
  schema: Activity,
  scoped: true,
  summary: 'List the activities of a project',
  example: { filter: '{"active":true,"name":{"$regex":"yoga","$options":"i"}}', sort: '+name,-createdAt' }
})
