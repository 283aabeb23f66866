// When a change feed stream writes its checkpoints and ends, without a database or the wall
// clock: node:test's fake timers move Date and setTimeout, which the stream and its waits read.
import { EventEmitter } from 'node:events'
import { mock } from 'node:test'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import t, { type Test } from 'tap'
import type { Change } from '../../changes/change-events.js'
import type { ChangeHub } from '../../changes/change-hub.js'
import type { FeedStep } from '../../changes/feed-steps.js'
import { CHECKPOINT_MS, streamFeed } from '../../changes/feed-stream.js'
import { Waiters } from '../../changes/waiters.js'
import { settle } from '../helpers/until.js'

const change: Change = {
  token: { _data: 'k' }, key: 'k', type: 'update', id: 'd', projects: ['a'], lost: false, committedAt: 0
}

/** A stream of project a over fakes of Fastify and the hub: the lines it wrote, and the switches it listens to. */
function openStream (streamSeconds: number) {
  const waiters = new Waiters()
  const ready: string[] = []
  const listeners = new Set<() => void>()
  const changes = {
    stopping: false,
    onStop: (listener: () => void) => { listeners.add(listener); return () => { listeners.delete(listener) } }
  }
  const lines: Array<Record<string, unknown>> = []
  const raw = Object.assign(new EventEmitter(), {
    ended: false,
    writeHead: () => {},
    write: (chunk: string, written?: () => void) => {
      lines.push(JSON.parse(chunk) as Record<string, unknown>)
      written?.()
      return true
    },
    end: () => { raw.ended = true }
  })
  const fastify = {
    lifecycle: { exempt: () => () => {} }, config: { CHANGES_STREAM_SECONDS: streamSeconds }, changes
  } as unknown as FastifyInstance
  const reply = { raw, hijack: () => {}, getHeaders: () => ({}) } as unknown as FastifyReply
  const request = { id: 'r', log: { warn: () => {} } } as unknown as FastifyRequest
  const hub = {
    isRunning: true, nextWake: waiters.nextWake.bind(waiters), mark: () => 0, movedSince: () => false
  } as unknown as ChangeHub
  const point = { resumeToken: { _data: 'p' } }
  const next = async (): Promise<FeedStep> => ({
    events: ready.splice(0), position: { phase: 'following', point }, synced: true, committedAt: []
  })
  const done = streamFeed({
    fastify,
    request,
    reply,
    hub,
    project: 'a',
    limit: 10,
    first: { phase: 'following', point },
    next,
    encode: () => 'token',
    delivered: () => {}
  })
  return {
    lines,
    raw,
    done,
    waiters,
    checkpoints: () => lines.filter((line) => 'next' in line).length,
    /** A change of project a: ready to read, and its waiters woken, as the hub does. */
    change: (event: string) => { ready.push(event); waiters.wakeFor([change]) },
    stop: () => { changes.stopping = true; for (const listener of [...listeners]) listener() }
  }
}

/** Fake timers for one test, given back when it ends (a hook on the root would reach other files' tests in a group). */
function fakeTimers (t: Test): void {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 })
  t.teardown(() => { mock.timers.reset() })
}

t.test('a quiet stream writes a checkpoint every CHECKPOINT_MS, not before, ' +
  'and a last one when its time is up', async (t) => {
  fakeTimers(t)
  const stream = openStream(40)
  await settle()
  t.equal(stream.checkpoints(), 1, 'the first answer is followed by a checkpoint at once')
  mock.timers.tick(CHECKPOINT_MS - 1)
  await settle()
  t.equal(stream.checkpoints(), 1, 'none a millisecond before CHECKPOINT_MS')
  mock.timers.tick(1)
  await settle()
  t.equal(stream.checkpoints(), 2, 'one at CHECKPOINT_MS')
  mock.timers.tick(CHECKPOINT_MS)
  await settle()
  t.equal(stream.checkpoints(), 3, 'and again CHECKPOINT_MS later')
  // Two quiet checkpoints in, CHANGES_STREAM_SECONDS runs out before a third would come.
  mock.timers.tick(10_000 - 1)
  await settle()
  t.notOk(stream.raw.ended, 'still open a millisecond before CHANGES_STREAM_SECONDS')
  mock.timers.tick(1)
  await settle()
  t.ok(stream.raw.ended, 'ended at CHANGES_STREAM_SECONDS')
  t.equal(stream.checkpoints(), 4, 'with a last checkpoint')
  t.ok(stream.lines.every((line) => 'next' in line), 'and nothing but checkpoints')
  t.equal(stream.waiters.count, 0, 'no wait left behind')
  await stream.done
})

t.test('a change is written at once, with a checkpoint; the quiet checkpoints count from it', async (t) => {
  fakeTimers(t)
  const stream = openStream(600)
  await settle()
  mock.timers.tick(5000)
  stream.change('{"type":"upsert","_id":"d"}')
  await settle()
  t.same(stream.lines.slice(1), [{ type: 'upsert', _id: 'd' }, { next: 'token', synced: true }],
    'the event and its checkpoint, the clock unmoved')
  mock.timers.tick(CHECKPOINT_MS - 1)
  await settle()
  t.equal(stream.checkpoints(), 2, 'no quiet checkpoint before CHECKPOINT_MS after the last one')
  mock.timers.tick(1)
  await settle()
  t.equal(stream.checkpoints(), 3)
  stream.stop()
  await settle()
  t.ok(stream.raw.ended, 'the service stopping ends it, the clock unmoved')
  t.equal(stream.checkpoints(), 4, 'with a last checkpoint')
  await stream.done
})
