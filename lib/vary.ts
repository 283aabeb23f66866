import type { FastifyReply } from 'fastify'

/**
 * Adds `field` to the answer's Vary beside the fields there (Origin, say), once whatever its case;
 * nothing beside `*`. As @fastify/cors and @fastify/compress add theirs: Vary is one list, never overwritten.
 */
export function varyOn (reply: FastifyReply, field: string): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) {
    reply.header('vary', field)
    return
  }
  const fields = String(vary).split(',').map((name) => name.trim()).filter((name) => name !== '')
  if (fields.some((name) => name === '*' || name.toLowerCase() === field.toLowerCase())) return
  reply.header('vary', [...fields, field].join(', '))
}
