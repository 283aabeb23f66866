import { listAndFeed } from '../../../list-and-feed.js'
import { Session } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'sessions',
  schema: Session,
  scoped: true,
  summary: 'List the sessions of a project',
  example: { filter: '{"start":{"$gte":"2024-06-14"},"end":{"$lt":"2024-06-16"}}', sort: '+start' }
})
