import type { FastifyInstance } from 'fastify'
import { listAndFeed } from '../list-and-feed.js'
import { Project } from '../../schemas/kinds.js'

const example = { filter: '{"name":{"$regex":"festival","$options":"i"}}', sort: '-createdAt' }

export default async function projects (fastify: FastifyInstance) {
  await fastify.register(listAndFeed({
    collection: 'projects',
    schema: Project,
    scoped: false,
    summary: 'List all projects',
    example
  }))
  await fastify.register(listAndFeed({
    collection: 'projects',
    schema: Project,
    scoped: false,
    url: '/public',
    fixedFilter: { public: true },
    open: true,
    summary: 'List the public projects',
    example
  }))
}
