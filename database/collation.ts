// The service's collation (COLLATION, docs/configuration.md and docs/query-language.md, "Language"):
// the ICU collation every list, count, keyset range and feed read runs with, and the indexes are
// built with, in MongoDB's own terms (https://www.mongodb.com/docs/manual/reference/collation/).
import type { CollationOptions } from 'mongodb'

/**
 * The manual's supported locales (reference/collation-locales-defaults), each with the variants
 * it names after a colon (`de:search/eor/phonebook` allows `de@collation=phonebook`).
 */
const LOCALES: ReadonlyMap<string, string[]> = new Map(`
af sq am ar:compat hy as az:search bn:traditional be bs:search bs_Cyrl bg my ca:search chr
zh:big5han/gb2312han/unihan/zhuyin zh_Hant hr:search cs:search da:search nl dz en en_US en_US_POSIX
eo et ee fo fil fi:search/traditional fr fr_CA gl:search ka de:search/eor/phonebook de_AT:phonebook
el gu ha haw he:search hi hu is:search ig smn:search id ga it ja:unihan kl:search kn:traditional kk
km kok ko:search/searchjl/unihan ky lkt lo lv ln:phonetic lt dsb lb mk ms ml mt mr mn ne se:search
nb:search nn:search or om ps fa fa_AF pl pt pa ro ru sr sr_Latn:search si:dictionary sk:search sl
es:search/traditional sw sv:search ta te th bo to tr:search uk hsb ur ug vi:traditional wae cy
yi:search yo zu
`.split(/\s+/).filter(Boolean).map((entry) => {
    const [locale = '', variants = ''] = entry.split(':')
    return [locale, variants === '' ? [] : variants.split('/')]
  }))

type Option = Exclude<keyof CollationOptions, 'locale'>
const CHOICES: Record<Option, readonly unknown[]> = {
  strength: [1, 2, 3, 4, 5],
  caseLevel: [true, false],
  caseFirst: ['upper', 'lower', 'off'],
  numericOrdering: [true, false],
  alternate: ['non-ignorable', 'shifted'],
  maxVariable: ['punct', 'space'],
  backwards: [true, false],
  normalization: [true, false]
}

export class CollationError extends Error {}

/**
 * COLLATION's text as the collation document MongoDB is sent, or undefined for `simple` (binary
 * order: no collation is sent at all). Written `fr`, `fr,numericOrdering=true,strength=2` or as
 * the JSON document itself; every option is checked here, so a typo stops start-up rather than
 * failing every query.
 */
export function parseCollation (text: string): CollationOptions | undefined {
  const trimmed = text.trim()
  if (trimmed === 'simple') return undefined
  const written = /^[[{]/.test(trimmed) ? fromJson(trimmed) : fromPairs(trimmed)
  const { locale, ...options } = written
  if (typeof locale !== 'string') throw new CollationError('COLLATION needs a locale, such as fr or {"locale":"fr"}')
  if (locale === 'simple') {
    if (Object.keys(options).length > 0) {
      throw new CollationError('COLLATION: the simple locale (binary order) takes no options')
    }
    return undefined
  }
  const [base = '', variant] = locale.split('@collation=')
  const variants = LOCALES.get(base)
  if (variants === undefined || (variant !== undefined && !variants.includes(variant))) {
    throw new CollationError(`COLLATION: '${locale}' is not a locale MongoDB supports; write one such as fr, fr_CA, ` +
      'en, de@collation=phonebook (the manual\'s "Collation Locales and Default Parameters")')
  }
  const collation: Record<string, unknown> = { locale }
  for (const [name, value] of Object.entries(options)) {
    const choices = CHOICES[name as Option]
    if (choices === undefined) {
      throw new CollationError(
        `COLLATION: '${name}' is not a collation option; options are ${Object.keys(CHOICES).join(', ')}`
      )
    }
    if (!choices.includes(value)) {
      throw new CollationError(`COLLATION: ${name} takes ${choices.join(', ')}, not ${JSON.stringify(value)}`)
    }
    collation[name] = value
  }
  return collation as unknown as CollationOptions
}

function fromJson (text: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new CollationError('COLLATION is not valid JSON')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CollationError('COLLATION as JSON is an object, such as {"locale":"fr"}')
  }
  return parsed as Record<string, unknown>
}

/**
 * `fr,numericOrdering=true`: the locale, then options whose values are read as numbers or
 * booleans where they are.
 */
function fromPairs (text: string): Record<string, unknown> {
  const [locale, ...pairs] = text.split(',').map((part) => part.trim())
  const written: Record<string, unknown> = { locale }
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new CollationError(`COLLATION: '${pair}' is not option=value`)
    const value = pair.slice(at + 1)
    written[pair.slice(0, at)] = value === 'true'
      ? true
      : value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value
  }
  return written
}

/**
 * The collation's identity for what depends on it (cursors, feed tokens): one text per
 * collation, whatever order its options were written in.
 */
export function collationKey (collation: CollationOptions | undefined): string {
  if (collation === undefined) return 'simple'
  return Object.entries(collation).sort(([a], [b]) => a < b ? -1 : 1)
    .map(([key, value]) => `${key}=${String(value)}`).join(',')
}
