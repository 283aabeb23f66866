import { listRoute } from '../../../../list-endpoint/list-route.js'
import { Place } from '../../../../schemas/kinds.js'

export default listRoute({
  collection: 'places',
  schema: Place,
  scoped: true,
  summary: 'List the places (spaces) of a project',
  example: { filter: '{"maxNumberOfParticipants":{"$gte":50}}', sort: '-maxNumberOfParticipants' }
})
