/**
 * How a test runs node in a child process: `spawn(NODE, nodeArgs([...]))`. tap's runner makes
 * every child of a test load its process-tracking hooks (@tapjs/processinfo, through
 * NODE_OPTIONS): they note which files each process loads, which nothing here reads, and slow
 * every child's start. `env -u NODE_OPTIONS` starts node without them (the same process: env
 * replaces itself with node). The service's coverage is still collected (c8, through
 * NODE_V8_COVERAGE); tools that are not the service (tsc, npm) run without it: `{ coverage: false }`,
 * since V8's counting slows them and their reports would be read for nothing.
 */
export const NODE = '/usr/bin/env'

const unset = (coverage: boolean): string[] => ['-u', 'NODE_OPTIONS', ...(coverage ? [] : ['-u', 'NODE_V8_COVERAGE'])]

export function nodeArgs (args: readonly string[], { coverage = true } = {}): string[] {
  return [...unset(coverage), process.execPath, ...args]
}

/** npm (itself a node program), without coverage. */
export function npmArgs (args: readonly string[]): string[] {
  return [...unset(false), 'npm', ...args]
}
