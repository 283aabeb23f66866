import { listRoute } from '../../../../list-endpoint/list-route.js'
import { Team } from '../../../../schemas/kinds.js'

export default listRoute({
  collection: 'teams',
  schema: Team,
  scoped: true,
  summary: 'List the teams of a project',
  example: { filter: '{"name":{"$regex":"^Team"}}', sort: '+name' }
})
