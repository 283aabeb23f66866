import { listAndFeed } from '../../../list-and-feed.js'
import { Place } from '../../../../schemas/kinds.js'

export default listAndFeed({
  collection: 'places',
  schema: Place,
  scoped: true,
  summary: 'List the places (spaces) of a project',
  example: { filter: '{"maxNumberOfParticipants":{"$gte":50}}', sort: '-maxNumberOfParticipants' }
})
