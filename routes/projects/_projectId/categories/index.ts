import { listAndFeed } from '../../../list-and-feed.js'
import { Category } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'categories',
  schema: Category,
  scoped: true,
  summary: 'List the categories of a project',
  example: { filter: '{"name":{"$in":["Music","Dance"]}}', sort: '+name' }
})
