// COLLATION's forms (docs/configuration.md): what MongoDB is sent for each, and what stops start-up.
import t from 'tap'
import { collationKey, parseCollation } from '../../database/collation.js'

t.test('the forms of COLLATION, as the collation document MongoDB is sent', async (t) => {
  t.same(parseCollation('fr'), { locale: 'fr' }, 'a locale')
  t.equal(parseCollation('simple'), undefined, 'binary order sends no collation')
  t.equal(parseCollation('{"locale":"simple"}'), undefined, 'also as JSON')
  t.same(parseCollation('fr_CA'), { locale: 'fr_CA' })
  t.same(parseCollation('de@collation=phonebook, strength=2'), { locale: 'de@collation=phonebook', strength: 2 },
    'a variant, an option')
  t.same(parseCollation('en,numericOrdering=true,caseFirst=upper,alternate=shifted,maxVariable=space,' +
    'backwards=false,caseLevel=true,normalization=true'), {
    locale: 'en',
    numericOrdering: true,
    caseFirst: 'upper',
    alternate: 'shifted',
    maxVariable: 'space',
    backwards: false,
    caseLevel: true,
    normalization: true
  })
  t.same(parseCollation('{"locale":"fr","strength":1}'), { locale: 'fr', strength: 1 }, 'JSON')
})

t.test('what is refused, and why', async (t) => {
  const refusals: Array<[string, RegExp]> = [
    ['xx', /'xx' is not a locale MongoDB supports/],
    ['fr@collation=phonebook', /not a locale/],
    ['de@collation=pinyin', /not a locale/],
    ['fr,strength=0', /strength takes 1, 2, 3, 4, 5/],
    ['fr,strength=two', /strength takes/],
    ['fr,caseFirst=none', /caseFirst takes upper, lower, off/],
    ['fr,numericOrdering=yes', /numericOrdering takes true, false/],
    ['fr,colour=blue', /'colour' is not a collation option/],
    ['fr,strength', /'strength' is not option=value/],
    ['simple,strength=2', /simple locale .* takes no options/],
    ['{"locale":"fr"', /not valid JSON/],
    ['["fr"]', /an object/],
    ['{"strength":2}', /needs a locale/]
  ]
  for (const [text, message] of refusals) t.throws(() => parseCollation(text), message, text)
})

t.test('one identity per collation, whatever order its options were written in', async (t) => {
  t.equal(collationKey(parseCollation('fr,strength=2,numericOrdering=true')),
    collationKey(parseCollation('{"numericOrdering":true,"locale":"fr","strength":2}')))
  t.not(collationKey(parseCollation('fr')), collationKey(parseCollation('fr,strength=2')))
  t.equal(collationKey(undefined), 'simple')
})
