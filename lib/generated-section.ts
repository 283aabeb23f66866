// Pages with a part written by a command (`npm run docs`, `npm run bench -- --write …`): the part
// lies between `<!-- <command>: begin -->` and `<!-- <command>: end -->`, and the rest is prose.

const markers = (command: string): [string, string] => [`<!-- ${command}: begin -->`, `<!-- ${command}: end -->`]

/** Where the generated part of `page` lies; throws when `page` has no such part. */
function locate (page: string, command: string, name: string): { begin: number, end: number } {
  const [open, close] = markers(command)
  const begin = page.indexOf(open)
  const end = page.indexOf(close)
  if (begin === -1 || end < begin) throw new Error(`${name} has no ${open} … ${close} lines to write between`)
  return { begin: begin + open.length, end }
}

/** The text `command` wrote into `page`. */
export function readSection (page: string, command: string, name = 'the page'): string {
  const { begin, end } = locate(page, command, name)
  return page.slice(begin, end)
}

/** `page` with the part `command` writes replaced by `body`. */
export function replaceSection (page: string, command: string, body: string, name = 'the page'): string {
  const { begin, end } = locate(page, command, name)
  return `${page.slice(0, begin)}\n${body.trimEnd()}\n${page.slice(end)}`
}
