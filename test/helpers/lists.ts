import { readdirSync } from 'node:fs'

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
