// A request-target in origin form (`/path?query`) or in absolute form (`http://host/path?query`),
// which a server must accept, taking the host from it rather than from Host (RFC 9112, 3.2.2).
const ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/

export interface RequestTarget {
  /** The path, without the query. */
  path: string
  /** In absolute form: the scheme, in lower case, and the authority (`host[:port]`) as written. */
  origin?: { scheme: string, authority: string }
}

export function readTarget (url: string): RequestTarget {
  const absolute = ABSOLUTE.exec(url)
  const rest = absolute === null ? url : url.slice(absolute[0].length)
  const mark = rest.indexOf('?')
  const path = (mark < 0 ? rest : rest.slice(0, mark)) || '/'
  if (absolute === null) return { path }
  return { path, origin: { scheme: (absolute[1] as string).toLowerCase(), authority: absolute[2] as string } }
}
