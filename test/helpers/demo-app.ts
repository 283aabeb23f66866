import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { build, type BuildOptions } from './build.js'

/** The app on a fresh database filled with the demo data (3 projects, 2 public). */
export async function buildWithDemoData (t: Test, options: BuildOptions = {}): Promise<FastifyInstance> {
  const fastify = await build(t, options)
  await seedDemoData(fastify.config.MONGODB_URI as string, fastify.config.MONGODB_DB)
  return fastify
}

export interface Page {
  data: Array<Record<string, unknown>>, limit: number, skip: number, total?: number, next?: string
}

export async function list (fastify: FastifyInstance, url: string): Promise<Page> {
  const res = await fastify.inject(url)
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

export async function projectIds (fastify: FastifyInstance): Promise<{ publicIds: string[], privateIds: string[] }> {
  const { data } = await list(fastify, '/projects?sort=%2Bname')
  return {
    publicIds: data.filter((p) => p.public === true).map((p) => p._id as string),
    privateIds: data.filter((p) => p.public !== true).map((p) => p._id as string)
  }
}

export const q = (filter: unknown): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`
