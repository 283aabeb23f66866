// The two readings of a host the service makes: whether a Host field is valid at all (RFC 9112,
// 3.2: else 400), and whether a host may be written into a Link (narrower). A replica's requests
// name one host or a few, so each keeps its last verdict.

/** `check`, with the verdict on the last host it was asked about kept. */
function lastVerdict (check: (host: string) => boolean): (host: string) => boolean {
  let last: string | undefined
  let verdict = false
  return (host) => {
    if (host !== last) {
      verdict = check(host)
      last = host
    }
    return verdict
  }
}

// RFC 3986's `host [":" port]`: a bracketed IP literal or a reg-name (percent-escapes and
// sub-delims included, empty allowed), then an optional port of digits.
const HOST_FIELD = /^(?:\[[\w:.~!$&'()*+,;=-]+\]|[\w.~!$&'()*+,;=%-]*)(?::\d*)?$/

/** Whether a Host field's value is a host and an optional port (RFC 9112, 3.2). */
export const validHostField = lastVerdict((host) => HOST_FIELD.test(host))

// A name, IPv4 or a bracketed IPv6, and a port up to 65535: anything else in Host, a trusted
// X-Forwarded-Host or an absolute request-target is not written into a Link.
const LINK_HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/

/** Whether `host` may start an absolute URL the service writes (a Link). */
export const usableHost = lastVerdict((host) => {
  const match = LINK_HOST.exec(host)
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535)
})
