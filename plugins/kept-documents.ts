import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { KeptDocuments } from '../list-endpoint/kept-documents.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The JSON of documents lately sent, shared by every list and feed (DOCUMENTS_KEPT_MB; undefined when 0). */
    keptDocuments: KeptDocuments | undefined
  }
}

async function keptDocumentsPlugin (fastify: FastifyInstance) {
  const megabytes = fastify.config.DOCUMENTS_KEPT_MB
  fastify.decorate('keptDocuments', megabytes === 0 ? undefined : new KeptDocuments(megabytes * 1024 * 1024))
}

export default fp(keptDocumentsPlugin, { name: 'kept-documents', dependencies: ['config'] })
