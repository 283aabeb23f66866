// A collation spec as a string comparison, with Intl.Collator (Node's full ICU) as the engine.
// mongod compares with an ICU collator set to the spec's attributes; Intl.Collator exposes
// fewer of them, so the levels it lacks are composed from collators it has, and what it
// cannot express at all is refused (code 2) rather than approximated.
import type { StringOrder } from './bson-order.js'
import type { CollationSpec } from './collation-spec.js'
import { findLocale, type ParsedLocale } from './collation-locales.js'
import { CommandError } from './errors.js'

/** A non-simple collation: its full spec (as listIndexes shows it) and its string order. */
export interface Collation {
  spec: CollationSpec
  compare: StringOrder
}

function unsupported (what: string): CommandError {
  return new CommandError(2, 'BadValue', `the offline database does not support ${what}`)
}

type Sensitivity = 'base' | 'accent' | 'case' | 'variant'

/**
 * The Intl locale: the locale's tag with its `co` variant. A locale ICU 57 did not tailor is
 * the root collation, as 'en' (untailored; V8 resolves 'und' to the process's default locale),
 * since newer CLDR tailors some (bo); with `backwards` it is fr-CA, the root collation with
 * backwards accents ([backwards 2], ICU's fr_CA.txt). V8 ignores `-u-kb-`, so a tailored
 * locale cannot have backwards.
 */
function intlLocale (parsed: ParsedLocale, spec: CollationSpec): string {
  const { entry, variant } = parsed
  if (variant !== undefined) {
    const mapped = entry.variants?.[variant]
    if (mapped === undefined || mapped === false) throw unsupported(`the collation locale '${spec.locale}'`)
    if (spec.backwards) throw unsupported(`backwards: true with the locale '${spec.locale}'`)
    return `${entry.tag}-u-co-${mapped.co}`
  }
  if (entry.root === true) return spec.backwards ? 'fr-CA' : 'en'
  if (spec.backwards) throw unsupported(`backwards: true with the locale '${spec.locale}'`)
  return entry.tag
}

/** Code point order of the NFD forms: ICU's identical level. */
function identicalLevel (a: string, b: string): number {
  const x = [...a.normalize('NFD')].map((c) => c.codePointAt(0) as number)
  const y = [...b.normalize('NFD')].map((c) => c.codePointAt(0) as number)
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number) ? -1 : 1
  }
  return Math.sign(x.length - y.length)
}

/**
 * The Intl sensitivities compared in turn. ICU's levels are primary, secondary, case (with
 * caseLevel), tertiary, quaternary and identical; each Intl sensitivity compares a prefix of
 * them ('case' is primary plus the case level), so once the levels before are equal the next
 * collator decides by the next level alone.
 */
function levels (spec: CollationSpec): Sensitivity[] {
  const upTo: Sensitivity = spec.strength === 1 ? 'base' : spec.strength === 2 ? 'accent' : 'variant'
  if (!spec.caseLevel) return [upTo]
  if (upTo === 'base') return ['case']
  return upTo === 'accent' ? ['accent', 'case'] : ['accent', 'case', 'variant']
}

function build (spec: CollationSpec): StringOrder {
  const parsed = findLocale(spec.locale)
  if (parsed === undefined) throw unsupported(`the collation locale '${spec.locale}'`)
  const shifted = spec.alternate === 'shifted'
  // V8's ignorePunctuation is ICU's alternate shifted with the locale's maxVariable (punct for all of them).
  if (shifted && spec.maxVariable === 'space') throw unsupported("alternate: 'shifted' with maxVariable: 'space'")
  // Intl has no quaternary level: shifted characters are compared there, and ja's kana differ there (ja.txt `<<<<`).
  if (spec.strength >= 4 && shifted) throw unsupported(`strength ${spec.strength} with alternate: 'shifted'`)
  if (spec.strength >= 4 && parsed.name === 'ja') {
    throw unsupported(`strength ${spec.strength} with the locale '${spec.locale}'`)
  }
  const locale = intlLocale(parsed, spec)
  const collators = levels(spec).map((sensitivity) => new Intl.Collator(locale, {
    usage: 'sort',
    sensitivity,
    numeric: spec.numericOrdering,
    caseFirst: spec.caseFirst === 'off' ? 'false' : spec.caseFirst,
    ignorePunctuation: shifted
  }))
  // An Intl locale the ICU here lacks would silently become the default locale: refused instead.
  if (collators[0]?.resolvedOptions().locale !== locale) {
    throw unsupported(`the collation locale '${spec.locale}' with the ICU of this Node`)
  }
  const identical = spec.strength === 5
  // V8 always normalizes (ECMA-402 asks canonically equivalent strings to compare equal). With
  // normalization off, ICU promises the right order only for text in FCD form, which is nearly
  // all text; for the rest this gives the order normalization gives, one mongod may also give.
  return (a, b) => {
    for (const collator of collators) {
      const order = collator.compare(a, b)
      if (order !== 0) return order < 0 ? -1 : 1
    }
    return identical ? identicalLevel(a, b) : 0
  }
}

const cache = new Map<string, Collation>()

/** The collation of a spec, built once per distinct spec (collators are costly to make). */
export function collationOf (spec: CollationSpec | undefined): Collation | undefined {
  if (spec === undefined) return undefined
  const key = JSON.stringify(spec)
  let collation = cache.get(key)
  if (collation === undefined) {
    collation = { spec, compare: build(spec) }
    cache.set(key, collation)
  }
  return collation
}
