// A process with the service's logger (serverOptions, as server.ts builds it) that fills a stdout
// no one reads, then exits on SIGTERM with a last line, as close-with-grace does; run by
// unread-log.test.ts.
import Fastify from 'fastify'
import { serverOptions } from '../../app.js'
import { readConfig } from '../../plugins/config.js'

const fastify = Fastify(serverOptions(readConfig({ LOG_LEVEL: 'info', CURSOR_KEY_FILE: 'off' })))
// Far more than a pipe holds: the logger's writes then wait for a reader.
for (let i = 0; i < 5000; i++) fastify.log.info({ i, pad: 'x'.repeat(200) }, 'filling the pipe')
process.once('SIGTERM', () => {
  fastify.log.info('SIGTERM received')
  process.exit(0)
})
process.send?.('filled')
setInterval(() => {}, 60_000)
