import { listAndFeed } from '../../../list-and-feed.js'
import { Team } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'teams',
  schema: Team,
  scoped: true,
  summary: 'List the teams of a project',
  example: { filter: '{"name":{"$regex":"^Team"}}', sort: '+name' }
})
