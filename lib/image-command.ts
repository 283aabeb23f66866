import { readFileSync } from 'node:fs'

/**
 * The runtime image's command (the last `CMD [...]` in exec form of a Dockerfile) and the node
 * flags in it: `CMD ["node", ...flags, "dist/server.js"]`. The benchmark and the tests start the
 * service with these flags, so that the image's command stays the one place they are written.
 */
export function imageCommand (dockerfile: string | URL): { command: string[], nodeFlags: string[] } {
  const text = readFileSync(dockerfile, 'utf8')
  const exec = [...text.matchAll(/^CMD (\[.*\])$/gm)].at(-1)?.[1]
  if (exec === undefined) throw new Error(`${String(dockerfile)} has no CMD in exec form`)
  const command = JSON.parse(exec) as string[]
  return { command, nodeFlags: command.slice(1, -1) }
}
