// lib/text-seal.ts: what it seals opens only with its keys and its bound, and tells nothing of
// the text (a fresh nonce every time).
import t from 'tap'
import { TextSeal } from '../../lib/text-seal.js'

const key = (fill: string): Buffer => Buffer.from(fill.repeat(32))
const text = '{"t":{"_data":"826B0E18"},"a":"826B0E18"}'

t.test('it opens with its key and its bound, and with nothing else', async (t) => {
  const seal = new TextSeal([key('a')])
  const sealed = seal.seal(text, 'v2.body.request')
  t.match(sealed, /^[A-Za-z0-9_-]+$/, 'base64url')
  t.notMatch(Buffer.from(sealed, 'base64url').toString('latin1'), /_data|826B/, 'nothing of the text shows')
  t.equal(seal.open(sealed, 'v2.body.request')?.toString(), text)
  t.equal(seal.open(sealed, 'v2.other.request'), undefined, 'another bound: grafted onto another tag')
  t.equal(new TextSeal([key('b')]).open(sealed, 'v2.body.request'), undefined, 'another key')
  const bytes = Buffer.from(sealed, 'base64url')
  for (const at of [0, 20, 40, bytes.length - 1]) {
    const altered = Buffer.from(bytes)
    altered[at] = (altered[at] as number) ^ 1
    t.equal(seal.open(altered.toString('base64url'), 'v2.body.request'), undefined, `byte ${at} altered`)
  }
  for (const extra of ['x', 'xx', 'xxx', '=', ' ']) {
    t.equal(seal.open(`${sealed}${extra}`, 'v2.body.request'), undefined, `'${extra}' added: not the seal's text`)
  }
  for (const junk of ['', 'x', 'AAAA', bytes.subarray(0, 44).toString('base64url')]) {
    t.equal(seal.open(junk, 'v2.body.request'), undefined, `'${junk}': too short`)
  }
})

t.test('two seals of the same text differ: whether a text changed does not show', async (t) => {
  const seal = new TextSeal([key('a')])
  const [one, two] = [seal.seal(text, 'b'), seal.seal(text, 'b')]
  t.not(one, two)
  t.equal(seal.open(one, 'b')?.toString(), seal.open(two, 'b')?.toString())
  t.same(seal.open(seal.seal(Buffer.from([0, 255, 1]), 'b'), 'b'), Buffer.from([0, 255, 1]), 'bytes as well as text')
})

t.test('a key being rotated out still opens what it sealed; the first key seals', async (t) => {
  const old = new TextSeal([key('a')]).seal(text, 'b')
  const rotated = new TextSeal([key('c'), key('a')])
  t.equal(rotated.open(old, 'b')?.toString(), text)
  t.equal(new TextSeal([key('c')]).open(rotated.seal(text, 'b'), 'b')?.toString(), text, 'sealed with the first')
  t.throws(() => new TextSeal([]), /at least one key/)
})

t.test('a key seals at most so many texts: then a new salt, a new key, and both open', async (t) => {
  const seal = new TextSeal([key('a')], 2)
  const salts = Array.from({ length: 5 }, (_, i) => seal.seal(`${text}${i}`, 'b'))
  const saltOf = (sealed: string): string => Buffer.from(sealed, 'base64url').subarray(0, 16).toString('hex')
  t.equal(new Set(salts.map(saltOf)).size, 3, 'two seals per salt')
  salts.forEach((sealed, i) => { t.equal(seal.open(sealed, 'b')?.toString(), `${text}${i}`, `seal ${i} opens`) })
  t.equal(new TextSeal([key('a')]).open(salts[4] as string, 'b')?.toString(), `${text}4`,
    'and another replica opens it')
})
