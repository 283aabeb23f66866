// src/openapi.ts is what openapi-typescript makes of the service's current OpenAPI document:
// a change to the service's schemas that is not regenerated (`npm run generate -w client`) fails here.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { generateTypes, TYPES_FILE } from '../scripts/generate-types.js'

t.test('the checked-in types are those the current service generates', async (t) => {
  const generated = await generateTypes()
  t.ok(generated === readFileSync(TYPES_FILE, 'utf8'),
    'client/src/openapi.ts is current; run `npm run generate -w client`')
  t.match(generated, /SessionFilter: \{/, 'the filter schemas are in it')
})
