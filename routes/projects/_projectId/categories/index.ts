import { listRoute } from '../../../../list-endpoint/list-route.js'
import { Category } from '../../../../schemas/kinds.js'

export default listRoute({
  collection: 'categories',
  schema: Category,
  scoped: true,
  summary: 'List the categories of a project',
  example: { filter: '{"name":{"$in":["Music","Dance"]}}', sort: '+name' }
})
