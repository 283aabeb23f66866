// SlotSet: what a Set does for the objects it holds, without a hash table.
import t from 'tap'
import { SlotSet } from '../../lib/slot-set.js'

t.test('add, has, delete and size as a Set', async (t) => {
  const set = new SlotSet<{ n: number }>()
  const items = Array.from({ length: 5 }, (_, n) => ({ n }))
  for (const item of items) t.equal(set.add(item), set, 'add returns the set')
  set.add(items[0] as { n: number })
  t.equal(set.size, 5, 'an object added twice is held once')
  t.equal(set.delete(items[1] as { n: number }), true)
  t.equal(set.delete(items[1] as { n: number }), false, 'a second delete finds nothing')
  t.equal(set.delete({ n: 9 }), false, 'an object never added')
  t.notOk(set.has(items[1] as { n: number }))
  t.same([...set].map((item) => item.n).sort(), [0, 2, 3, 4], 'the others stay, whichever slot they moved to')
  for (const item of [items[4], items[0]] as Array<{ n: number }>) set.delete(item)
  t.same([...set].map((item) => item.n).sort(), [2, 3])
  set.add(items[1] as { n: number })
  t.ok(set.has(items[1] as { n: number }), 'a deleted object can come back')
  t.equal(set.size, 3)
})

t.test('deleting while iterating, as the driver does when it ends every session on close', async (t) => {
  const set = new SlotSet<object>()
  const items = Array.from({ length: 10 }, () => ({}))
  for (const item of items) set.add(item)
  const seen = Array.from(set, (item) => { set.delete(item); return item })
  t.equal(seen.length, 10, 'every object is visited once')
  t.equal(new Set(seen).size, 10)
  t.equal(set.size, 0)
})

t.test('clear, and one object in two sets', async (t) => {
  const a = new SlotSet<object>()
  const b = new SlotSet<object>()
  const shared = {}
  a.add({}).add(shared)
  b.add(shared)
  a.clear()
  t.equal(a.size, 0)
  t.notOk(a.has(shared))
  t.ok(b.has(shared), 'each set keeps its own slot on the object')
  a.add(shared)
  t.ok(b.delete(shared))
  t.ok(a.has(shared), 'deleting from one set leaves the other')
})

t.test('objects that cannot take a property (frozen, sealed) are held all the same', async (t) => {
  const set = new SlotSet<object>()
  const frozen = Object.freeze({})
  const sealed = Object.seal({})
  const plain = {}
  set.add(frozen).add(sealed).add(plain).add(frozen)
  t.equal(set.size, 3, 'each once')
  t.ok(set.has(frozen) && set.has(sealed) && set.has(plain))
  t.same(new Set(set), new Set([frozen, sealed, plain]), 'iterated with the others')
  t.equal(set.delete(frozen), true)
  t.equal(set.delete(frozen), false, 'a second delete finds nothing')
  t.notOk(set.has(frozen))
  set.clear()
  t.equal(set.size, 0)
  t.notOk(set.has(sealed))
})
