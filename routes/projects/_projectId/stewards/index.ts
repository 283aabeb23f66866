import { listRoute } from '../../../../list-endpoint/list-route.js'
import { Steward } from '../../../../schemas/kinds.js'

export default listRoute({
  collection: 'stewards',
  schema: Steward,
  scoped: true,
  summary: 'List the stewards (supervisors) of a project',
  example: { filter: '{"email":{"$regex":"@example.org$"}}', sort: '+name' }
})
