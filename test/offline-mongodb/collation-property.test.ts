// Property: under any collation a single Intl.Collator can express, a find sorted by a string
// field gives the order of an Intl.Collator built here straight from the spec, and `$gte` finds
// exactly the strings that collator puts at or after the bound (manual: "Collation",
// https://www.mongodb.com/docs/manual/reference/collation/). Against real MongoDB too when
// MONGODB_URI is set: mongod's ICU then plays the stand-in's part.
import fc from 'fast-check'
import type { CollationOptions } from 'mongodb'
import t from 'tap'
import { clientOfTestDatabase } from '../helpers/database.js'

const { db } = await clientOfTestDatabase('collation_property')
const collection = db.collection<{ _id: number, s: string }>('strings')

/** Accents, case, digits, spaces and punctuation; a combining acute too (its strings stay in FCD form). */
const ALPHABET = ['a', 'A', 'b', 'B', 'e', 'E', 'é', 'É', 'è', 'ê', 'o', 'ö', 'Ö', 'z', 'Z', 'ß',
  'æ', 'å', 'ø', 'ñ', 'c', 'ç', '0', '1', '2', '9', '10', ' ', '-', '.', "'", '\u0301']
const text = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 6 }).map((parts) => parts.join(''))

/** mongod locale name → BCP 47 tag. */
const LOCALES: Record<string, string> = {
  en: 'en', fr: 'fr', de: 'de', es: 'es', sv: 'sv', da: 'da', pl: 'pl', fr_CA: 'fr-CA'
}

interface Drawn {
  locale: string
  strength: 1 | 2 | 3 | 5
  caseLevel: boolean
  caseFirst: 'upper' | 'lower' | 'off'
  numericOrdering: boolean
  shifted: boolean
}

const collations = fc.record({
  locale: fc.constantFrom(...Object.keys(LOCALES)),
  strength: fc.constantFrom(1 as const, 2 as const, 3 as const, 5 as const),
  caseLevel: fc.boolean(),
  caseFirst: fc.constantFrom('upper' as const, 'lower' as const, 'off' as const),
  numericOrdering: fc.boolean(),
  shifted: fc.boolean()
}).map((d): Drawn => ({
  ...d,
  // One Intl.Collator has the case level only at strength 1 ('case'); shifted characters only up to tertiary.
  caseLevel: d.caseLevel && d.strength === 1,
  shifted: d.shifted && d.strength !== 5,
  // mongod refuses caseFirst unless the case level or the tertiary one is compared; given explicitly, as da's
  // default is upper.
  caseFirst: d.strength >= 3 || (d.caseLevel && d.strength === 1) ? d.caseFirst : 'off'
}))

function specOf (d: Drawn): CollationOptions {
  // fr_CA compares accents backwards by default, which mongod refuses at strength 1; there, accents never count.
  const backwards = d.locale === 'fr_CA' && d.strength === 1 ? { backwards: false } : {}
  return {
    locale: d.locale,
    strength: d.strength,
    caseLevel: d.caseLevel,
    caseFirst: d.caseFirst,
    numericOrdering: d.numericOrdering,
    alternate: d.shifted ? 'shifted' : 'non-ignorable',
    ...backwards
  }
}

/** The independent order: Intl.Collator from the spec, and code points of the NFD forms for the identical level. */
function oracle (d: Drawn): (a: string, b: string) => number {
  const sensitivity = d.caseLevel ? 'case' : d.strength === 1 ? 'base' : d.strength === 2 ? 'accent' : 'variant'
  const collator = new Intl.Collator(LOCALES[d.locale], {
    sensitivity,
    numeric: d.numericOrdering,
    caseFirst: d.caseFirst === 'off' ? 'false' : d.caseFirst,
    ignorePunctuation: d.shifted
  })
  return (a, b) => {
    const order = collator.compare(a, b)
    if (order !== 0 || d.strength !== 5) return Math.sign(order)
    const x = [...a.normalize('NFD')].map((c) => c.codePointAt(0) as number)
    const y = [...b.normalize('NFD')].map((c) => c.codePointAt(0) as number)
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return Math.sign((x[i] as number) - (y[i] as number))
    }
    return Math.sign(x.length - y.length)
  }
}

t.test('a sorted find under a random collation is Intl.Collator\'s order, with _id breaking ties', async (t) => {
  await fc.assert(fc.asyncProperty(collations, fc.array(text, { minLength: 1, maxLength: 25 }),
    async (drawn, strings) => {
      await collection.deleteMany({})
      await collection.insertMany(strings.map((s, _id) => ({ _id, s })))
      const found = await collection.find({}, { collation: specOf(drawn), projection: { _id: 1 } })
        .sort({ s: 1, _id: 1 }).toArray()
      const compare = oracle(drawn)
      const expected = strings.map((s, i) => ({ s, i })).sort((x, y) => compare(x.s, y.s) || x.i - y.i).map((x) => x.i)
      t.same(found.map((doc) => doc._id), expected, JSON.stringify({ drawn, strings }))
    }), { numRuns: 60 })
})

t.test('$gte under a random collation finds the strings Intl.Collator puts at or after the bound', async (t) => {
  await fc.assert(fc.asyncProperty(collations, fc.array(text, { minLength: 1, maxLength: 25 }), text,
    async (drawn, strings, bound) => {
      await collection.deleteMany({})
      await collection.insertMany(strings.map((s, _id) => ({ _id, s })))
      const found = await collection.find({ s: { $gte: bound } }, { collation: specOf(drawn), projection: { _id: 1 } })
        .toArray()
      const compare = oracle(drawn)
      const expected = strings.flatMap((s, i) => compare(s, bound) >= 0 ? [i] : [])
      t.same(found.map((doc) => doc._id).sort((a, b) => a - b), expected, JSON.stringify({ drawn, strings, bound }))
    }), { numRuns: 60 })
})
