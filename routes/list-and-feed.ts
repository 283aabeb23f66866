// A list, its counts and its change feed, composed from one definition: the list
// (list-endpoint/) hands back what the others share with it; its counts (counts/) are registered
// beside it, and its feed (changes/) too, unless the list is open (readable without a token),
// which has no feed. Each list's route file calls this.
import type { FastifyInstance } from 'fastify'
import { registerListRoute, type ListDefinition } from '../list-endpoint/list-route.js'
import { feedRoute } from '../changes/feed-route.js'
import { countsRoute } from '../counts/counts-route.js'

/** Not a route file of its own: autoload passes over it (@fastify/autoload, `plugin.autoload`). */
export const autoload = false

/**
 * A route file's plugin: the list of `definition`, its counts at `<list>/counts`, and its change
 * feed at `<list>/changes` unless it is open, in a context of their own.
 */
export function listAndFeed (definition: ListDefinition) {
  return async function listAndFeedPlugin (fastify: FastifyInstance) {
    const list = registerListRoute(fastify, definition)
    countsRoute(fastify, list)
    if (definition.open !== true) feedRoute(fastify, list)
  }
}
