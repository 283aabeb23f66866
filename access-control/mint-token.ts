// `npm run token -- --projects <id,…|*> [--ttl 1h] [--sub name]`: a development token signed
// with a local ES256 key pair (made once in .dev-keys/), and the variables that make the
// service accept it. `eval "$(npm run -s token -- --projects '*')"` sets them in a shell.
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createSigner } from 'fast-jwt'
import { readOptions, usageError } from '../lib/command-line.js'
import { OBJECT_ID } from '../schemas/fields.js'

const USAGE = `usage: npm run token -- --projects <id,id,…|*> [--ttl 1h] [--sub developer]
  Prints export lines: AUTH_MODE, JWT_ISSUER, JWT_AUDIENCE, JWT_PUBLIC_KEY and TOKEN.
  --projects  the project ids the token may read, comma-separated, or * for all
  --ttl       lifetime: a number of seconds, or with s, m, h or d (default 1h)
  --sub       the token's subject (default developer)`

export const DEV_ISSUER = 'listing-api-dev'
export const DEV_AUDIENCE = 'listing-api'
const KEYS = path.join(process.cwd(), '.dev-keys')

function fail (message: string): never {
  usageError(USAGE, message)
}

function ttlSeconds (text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text)
  if (match === null) fail(`--ttl: '${text}' is not a duration such as 90, 15m, 1h or 2d`)
  return Number(match[1]) *
    ({ '': 1, s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[match[2] as string] as number
}

function keyPair (): { privatePem: string, publicPem: string } {
  const privateFile = path.join(KEYS, 'private.pem')
  const publicFile = path.join(KEYS, 'public.pem')
  if (!existsSync(privateFile)) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    mkdirSync(KEYS, { recursive: true })
    writeFileSync(privateFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 })
    writeFileSync(publicFile, publicKey.export({ format: 'pem', type: 'spki' }))
  }
  return { privatePem: readFileSync(privateFile, 'utf8'), publicPem: readFileSync(publicFile, 'utf8') }
}

const values = readOptions(USAGE, {
  projects: { type: 'string' },
  ttl: { type: 'string', default: '1h' },
  sub: { type: 'string', default: 'developer' }
})
if (values.projects === undefined) fail('--projects is required')
const projects = values.projects === '*' ? '*' : values.projects.split(',')
if (projects !== '*' && !projects.every((id) => OBJECT_ID.test(id))) {
  fail('--projects takes 24-hexadecimal project ids separated by commas, or *')
}

const { privatePem, publicPem } = keyPair()
const sign = createSigner({ key: privatePem, algorithm: 'ES256', kid: 'dev', expiresIn: ttlSeconds(values.ttl) * 1000 })
const token = sign({ iss: DEV_ISSUER, aud: DEV_AUDIENCE, sub: values.sub, projects })
const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`
console.log([
  'export AUTH_MODE=jwt',
  `export JWT_ISSUER=${DEV_ISSUER}`,
  `export JWT_AUDIENCE=${DEV_AUDIENCE}`,
  `export JWT_PUBLIC_KEY=${quote(publicPem.trim().replaceAll('\n', '\\n'))}`,
  `export TOKEN=${token}`
].join('\n'))
