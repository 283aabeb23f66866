import { ObjectId } from 'mongodb'
import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../../../plugins/errors.js'
import { OBJECT_ID } from '../../../schemas/fields.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The project of a nested list, checked: well-formed first, then existing. */
    projectId: ObjectId | null
  }
}

/**
 * Every /projects/:projectId/… route: a malformed id is refused before anything else (400),
 * and the project's existence is checked after the query string was validated (404), so that
 * a bad request never costs a database query.
 */
export default async function projectScope (fastify: FastifyInstance) {
  fastify.decorateRequest('projectId', null)

  fastify.addHook('onRequest', async (request) => {
    const { projectId } = request.params as { projectId: string }
    if (!OBJECT_ID.test(projectId)) {
      const message = `'${projectId}' is not a project id: expected 24 hexadecimal characters`
      throw new ProblemError(400, 'INVALID_PROJECT_ID', message, [{ param: 'projectId', pointer: '', code: 'INVALID_PROJECT_ID', message }])
    }
    request.projectId = new ObjectId(projectId)
  })

  fastify.addHook('preHandler', async (request) => {
    const project = await fastify.mongo.db?.collection('projects')
      .findOne({ _id: request.projectId as ObjectId }, { projection: { _id: 1 }, maxTimeMS: fastify.config.QUERY_TIMEOUT_MS })
    if (project == null) {
      const message = `No project has the id '${String(request.projectId)}'`
      throw new ProblemError(404, 'PROJECT_NOT_FOUND', message, [{ param: 'projectId', pointer: '', code: 'PROJECT_NOT_FOUND', message }])
    }
  })
}
