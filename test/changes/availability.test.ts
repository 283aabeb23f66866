// Whether a deployment can give change feeds, from its `hello` (no database: the replies of a
// replica set member, a mongos and a standalone server, of 6.0 and of older releases).
import t from 'tap'
import { FEEDS_WIRE_VERSION, deploymentReason, olderThanFeeds } from '../../changes/availability.js'

const member = (maxWireVersion: number) => ({ isWritablePrimary: true, setName: 'rs0', maxWireVersion, ok: 1 })
const mongos = (maxWireVersion: number) => ({ isWritablePrimary: true, msg: 'isdbgrid', maxWireVersion, ok: 1 })

t.test('a replica set or a sharded cluster of 6.0 or later gives feeds', async (t) => {
  t.equal(FEEDS_WIRE_VERSION, 17, 'wire version 17 is MongoDB 6.0')
  for (const wire of [17, 21, 25]) {
    t.equal(deploymentReason(member(wire)), undefined, `a member of wire version ${wire}`)
    t.equal(deploymentReason(mongos(wire)), undefined, `a mongos of wire version ${wire}`)
    t.equal(olderThanFeeds(member(wire)), false)
  }
})

t.test('a server older than 6.0 cannot, and the reason names its version', async (t) => {
  t.equal(olderThanFeeds(member(13)), true, 'asks buildInfo for the release')
  t.match(deploymentReason(member(13), '5.0.14'), /MongoDB 5\.0\.14: change feeds need MongoDB 6\.0 or later/, 'named by buildInfo')
  t.match(deploymentReason(mongos(16)), /MongoDB 5\.3 \(wire version 16\): change feeds need MongoDB 6\.0 or later/, 'named by its wire version when buildInfo is not known')
  t.match(deploymentReason(member(11)), /a MongoDB release of wire version 11/, 'a development release')
})

t.test('a standalone server cannot, whatever its version', async (t) => {
  t.match(deploymentReason({ isWritablePrimary: true, maxWireVersion: 25, ok: 1 }), /standalone server: change feeds need a replica set or a sharded cluster/)
})
