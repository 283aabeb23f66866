// The locales mongod's collation accepts: the manual's list, with its variants
// (https://www.mongodb.com/docs/manual/reference/collation-locales-defaults/), and what each
// defaults to in the ICU that mongod 7/8 links (57.1, whose data carries these settings).

/** A locale's settings where they differ from the root's (ICU's collation data, `[...]` settings). */
export interface LocaleDefaults {
  caseFirst?: 'upper'
  alternate?: 'shifted'
  normalization?: true
  backwards?: true
}

export interface LocaleEntry {
  /** The BCP 47 tag Intl.Collator takes for it. */
  tag: string
  /** Whether ICU 57 had no tailoring of its own for it: the root collation's order, and fr-CA's with `backwards`. */
  root?: true
  defaults?: LocaleDefaults
  /**
   * Its `@collation=` variants: the Intl `co` value, with the variant's own defaults; `false`
   * for one Intl.Collator cannot give (the `search` collations ECMA-402 leaves out, and the
   * `big5han`/`gb2312han` orders current ICU no longer ships).
   */
  variants?: Record<string, { co: string, defaults?: LocaleDefaults } | false>
}

const NORMALIZED: LocaleEntry['defaults'] = { normalization: true }
const SEARCH = { search: false } as const
const TRADITIONAL_NORMALIZED = { co: 'trad', defaults: NORMALIZED }

/**
 * Every locale of the manual's table. `root` and `defaults` are read from ICU 56's collation
 * data (icu4c/source/data/coll/*.txt, whose settings ICU 57 keeps): `[normalization on]`,
 * `[caseFirst upper]`, `[alternate shifted]`, `[backwards 2]`, also through `[import]`.
 */
export const LOCALES: Record<string, LocaleEntry> = {
  af: { tag: 'af' },
  am: { tag: 'am' },
  ar: { tag: 'ar', variants: { compat: { co: 'compat' } } },
  as: { tag: 'as', defaults: NORMALIZED },
  az: { tag: 'az', variants: SEARCH },
  be: { tag: 'be' },
  bg: { tag: 'bg' },
  bn: { tag: 'bn', defaults: NORMALIZED, variants: { traditional: TRADITIONAL_NORMALIZED } },
  bo: { tag: 'bo', root: true },
  bs: { tag: 'bs', variants: SEARCH },
  bs_Cyrl: { tag: 'bs-Cyrl' },
  ca: { tag: 'ca', root: true, variants: SEARCH },
  chr: { tag: 'chr' },
  cs: { tag: 'cs', variants: SEARCH },
  cy: { tag: 'cy' },
  da: { tag: 'da', defaults: { caseFirst: 'upper' }, variants: SEARCH },
  de: { tag: 'de', root: true, variants: { ...SEARCH, eor: { co: 'eor' }, phonebook: { co: 'phonebk' } } },
  de_AT: { tag: 'de-AT', root: true, variants: { phonebook: { co: 'phonebk' } } },
  dsb: { tag: 'dsb' },
  dz: { tag: 'dz', root: true },
  ee: { tag: 'ee' },
  el: { tag: 'el', defaults: NORMALIZED },
  en: { tag: 'en', root: true },
  en_US: { tag: 'en-US', root: true },
  en_US_POSIX: { tag: 'en-US-u-va-posix' },
  eo: { tag: 'eo' },
  es: { tag: 'es', variants: { ...SEARCH, traditional: { co: 'trad' } } },
  et: { tag: 'et' },
  fa: { tag: 'fa', defaults: NORMALIZED },
  fa_AF: { tag: 'fa-AF', defaults: NORMALIZED },
  fi: { tag: 'fi', variants: { ...SEARCH, traditional: { co: 'trad' } } },
  fil: { tag: 'fil' },
  fo: { tag: 'fo' },
  fr: { tag: 'fr', root: true },
  fr_CA: { tag: 'fr-CA', root: true, defaults: { backwards: true } },
  ga: { tag: 'ga', root: true },
  gl: { tag: 'gl', variants: SEARCH },
  gu: { tag: 'gu', defaults: NORMALIZED },
  ha: { tag: 'ha' },
  haw: { tag: 'haw' },
  he: { tag: 'he', defaults: NORMALIZED, variants: SEARCH },
  hi: { tag: 'hi', defaults: NORMALIZED },
  hr: { tag: 'hr', variants: SEARCH },
  hsb: { tag: 'hsb' },
  hu: { tag: 'hu' },
  hy: { tag: 'hy' },
  id: { tag: 'id', root: true },
  ig: { tag: 'ig', defaults: NORMALIZED },
  is: { tag: 'is', variants: SEARCH },
  it: { tag: 'it', root: true },
  ja: { tag: 'ja', variants: { unihan: { co: 'unihan' } } },
  ka: { tag: 'ka' },
  kk: { tag: 'kk' },
  kl: { tag: 'kl', variants: SEARCH },
  km: { tag: 'km', defaults: NORMALIZED },
  kn: { tag: 'kn', defaults: NORMALIZED, variants: { traditional: TRADITIONAL_NORMALIZED } },
  ko: {
    tag: 'ko', variants: { ...SEARCH, searchjl: { co: 'searchjl', defaults: NORMALIZED }, unihan: { co: 'unihan' } }
  },
  kok: { tag: 'kok', defaults: NORMALIZED },
  ky: { tag: 'ky' },
  lb: { tag: 'lb', root: true },
  lkt: { tag: 'lkt' },
  ln: { tag: 'ln', variants: { phonetic: { co: 'phonetic' } } },
  lo: { tag: 'lo' },
  lt: { tag: 'lt' },
  lv: { tag: 'lv' },
  mk: { tag: 'mk' },
  ml: { tag: 'ml' },
  mn: { tag: 'mn' },
  mr: { tag: 'mr', defaults: NORMALIZED },
  ms: { tag: 'ms', root: true },
  mt: { tag: 'mt', defaults: { caseFirst: 'upper' } },
  my: { tag: 'my', defaults: NORMALIZED },
  nb: { tag: 'nb', variants: SEARCH },
  ne: { tag: 'ne' },
  nl: { tag: 'nl', root: true },
  nn: { tag: 'nn', variants: SEARCH },
  om: { tag: 'om' },
  or: { tag: 'or', defaults: NORMALIZED },
  pa: { tag: 'pa', defaults: NORMALIZED },
  pl: { tag: 'pl' },
  ps: { tag: 'ps', defaults: NORMALIZED },
  pt: { tag: 'pt', root: true },
  ro: { tag: 'ro' },
  ru: { tag: 'ru' },
  se: { tag: 'se', variants: SEARCH },
  si: { tag: 'si', defaults: NORMALIZED, variants: { dictionary: { co: 'dict', defaults: NORMALIZED } } },
  sk: { tag: 'sk', variants: SEARCH },
  sl: { tag: 'sl' },
  smn: { tag: 'smn', variants: SEARCH },
  sq: { tag: 'sq' },
  sr: { tag: 'sr' },
  sr_Latn: { tag: 'sr-Latn', variants: SEARCH },
  sv: { tag: 'sv', variants: SEARCH },
  sw: { tag: 'sw', root: true },
  ta: { tag: 'ta', defaults: NORMALIZED },
  te: { tag: 'te', defaults: NORMALIZED },
  th: { tag: 'th', defaults: { alternate: 'shifted', normalization: true } },
  to: { tag: 'to' },
  tr: { tag: 'tr', variants: SEARCH },
  ug: { tag: 'ug' },
  uk: { tag: 'uk' },
  ur: { tag: 'ur' },
  vi: { tag: 'vi', defaults: NORMALIZED, variants: { traditional: TRADITIONAL_NORMALIZED } },
  wae: { tag: 'wae', root: true },
  yi: { tag: 'yi', defaults: NORMALIZED, variants: SEARCH },
  yo: { tag: 'yo', defaults: NORMALIZED },
  zh: { tag: 'zh', variants: { big5han: false, gb2312han: false, unihan: { co: 'unihan' }, zhuyin: { co: 'zhuyin' } } },
  zh_Hant: { tag: 'zh-Hant' },
  zu: { tag: 'zu', root: true }
}

/** A locale name as mongod reads it: the locale, and the `@collation=` variant if any. */
export interface ParsedLocale { name: string, entry: LocaleEntry, variant?: string }

/** The locale of the table that `locale` names exactly (mongod takes ICU's canonical spelling only). */
export function findLocale (locale: string): ParsedLocale | undefined {
  const [name = '', keywords] = locale.split('@', 2)
  const entry = Object.hasOwn(LOCALES, name) ? LOCALES[name] : undefined
  if (entry === undefined) return undefined
  if (keywords === undefined) return { name, entry }
  const variant = /^collation=([a-z0-9]+)$/.exec(keywords)?.[1]
  if (variant === undefined || entry.variants === undefined || !Object.hasOwn(entry.variants, variant)) return undefined
  return { name, entry, variant }
}

/**
 * What mongod suggests for a locale it does not know ("Did you mean 'en'?"): the name ICU would
 * fall back to, approximated by the known locale the given one's components start with.
 */
export function suggestLocale (locale: string): string | undefined {
  const parts = (locale.split('@')[0] ?? '').split(/[_-]/)
  const spelled = parts.map((part, i) => i === 0
    ? part.toLowerCase()
    : part.length === 4 ? part[0]?.toUpperCase() + part.slice(1).toLowerCase() : part.toUpperCase())
  for (let n = spelled.length; n > 0; n--) {
    const candidate = spelled.slice(0, n).join('_')
    if (candidate !== locale && Object.hasOwn(LOCALES, candidate)) return candidate
  }
  return undefined
}
