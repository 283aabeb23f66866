// `request.query` parsed when something first reads it. Fastify's router parses every query
// string as it routes (find-my-way's default parser, fast-querystring), yet the lists, feeds and
// counts read their raw query string themselves (plugins/list-query.ts), and a list's query
// string can be long: parsed and percent-decoded for nothing on every request otherwise.
import querystring from 'fast-querystring'

type Query = Record<string, unknown>

// Every trap parses first (once), into the proxy's own target, then does what the object
// itself would: the proxy behaves as the parsed object in every way a reader can observe.
class ParseOnRead implements Required<Omit<ProxyHandler<Query>, 'apply' | 'construct'>> {
  private text: string | undefined
  constructor (text: string) { this.text = text }
  private parsed (target: Query): Query {
    if (this.text !== undefined) {
      Object.assign(target, querystring.parse(this.text))
      this.text = undefined
    }
    return target
  }

  get (target: Query, key: string | symbol): unknown { return Reflect.get(this.parsed(target), key) }

  set (target: Query, key: string | symbol, value: unknown): boolean {
    return Reflect.set(this.parsed(target), key, value)
  }

  has (target: Query, key: string | symbol): boolean { return Reflect.has(this.parsed(target), key) }

  deleteProperty (target: Query, key: string | symbol): boolean {
    return Reflect.deleteProperty(this.parsed(target), key)
  }

  ownKeys (target: Query): Array<string | symbol> { return Reflect.ownKeys(this.parsed(target)) }

  getOwnPropertyDescriptor (target: Query, key: string | symbol): PropertyDescriptor | undefined {
    return Reflect.getOwnPropertyDescriptor(this.parsed(target), key)
  }

  defineProperty (target: Query, key: string | symbol, descriptor: PropertyDescriptor): boolean {
    return Reflect.defineProperty(this.parsed(target), key, descriptor)
  }

  getPrototypeOf (target: Query): object | null { return Reflect.getPrototypeOf(this.parsed(target)) }

  setPrototypeOf (target: Query, prototype: object | null): boolean {
    return Reflect.setPrototypeOf(this.parsed(target), prototype)
  }

  isExtensible (target: Query): boolean { return Reflect.isExtensible(this.parsed(target)) }
  preventExtensions (target: Query): boolean { return Reflect.preventExtensions(this.parsed(target)) }
}

/**
 * The router's query-string parser (`routerOptions.querystringParser`): what its default
 * (find-my-way's) gives, `{}` for no query and fast-querystring's object else, parsed on first read.
 */
export function lazyQuery (text: string): Query {
  if (text.length === 0) return {}
  // The target is fast-querystring's own kind of object (its prototype has none), filled on first read.
  return new Proxy(querystring.parse(''), new ParseOnRead(text))
}
