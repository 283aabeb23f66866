import { readdirSync } from 'node:fs'
import type { RouteOptions } from 'fastify'

/**
 * The lists of a project, read from the routes' folders (routes/projects/_projectId/<list>/): a
 * list added there is in every test that goes over the lists, and fails them until it has its
 * indexes, its OpenAPI path, its access control and its feed.
 */
export const NESTED_LISTS: readonly string[] =
  readdirSync(new URL('../../routes/projects/_projectId/', import.meta.url), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()

/** Every list: the projects, then a project's lists. */
export const ALL_LISTS: readonly string[] = ['projects', ...NESTED_LISTS]

/** A list as the app registers it: its GET route's path, and whether it is open (then it has no feed). */
export interface ListRoute { url: string, open: boolean }

/**
 * The app's lists from its route table, not from its OpenAPI document: give `onRoute` to build(),
 * and `routes` fills as the app registers its lists.
 */
export function listRoutes (): { onRoute: (route: RouteOptions) => void, routes: ListRoute[] } {
  const routes: ListRoute[] = []
  const onRoute = (route: RouteOptions): void => {
    const config = route.config as { listQuery?: unknown, open?: boolean } | undefined
    if (route.method === 'GET' && config?.listQuery !== undefined) {
      routes.push({ url: route.url, open: config.open === true })
    }
  }
  return { onRoute, routes }
}
