import { ObjectId } from 'mongodb'
import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../../../schemas/problem.js'
import { OBJECT_ID } from '../../../schemas/fields.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The project of a nested list, checked: well-formed first, then existing. */
    projectId: ObjectId | null
  }
}

/**
 * Every /projects/:projectId/… route: a malformed id is refused before anything else (400).
 * The project's existence is checked by the list itself, beside its query (list-handler.ts),
 * after the query string was validated: a bad request never costs a database query.
 */
export default async function projectScope (fastify: FastifyInstance) {
  fastify.decorateRequest('projectId', null)

  fastify.addHook('onRequest', (request, _reply, done) => {
    const { projectId } = request.params as { projectId: string }
    if (!OBJECT_ID.test(projectId)) {
      // Another method is refused as such (405, list-endpoint/get-only.ts), whatever the id.
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        done()
      } else {
        done(ProblemError.about('projectId', 400, 'INVALID_PROJECT_ID',
          `'${projectId}' is not a project id: expected 24 hexadecimal characters`))
      }
      return
    }
    request.projectId = ObjectId.createFromHexString(projectId)
    done()
  })
}
