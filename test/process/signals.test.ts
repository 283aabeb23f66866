// The service's SIGINT and SIGTERM: the first drains, a copy of it arriving at once (npm forwarding
// what a terminal's Ctrl-C already sent the whole group) is let go, a later one exits at once.
// On an emitter and a clock of the test's own: no process signal, no timer.
import { EventEmitter } from 'node:events'
import t from 'tap'
import { DUPLICATE_WINDOW_MS, onShutdownSignals, type ForwardedSignal } from '../../process/signals.js'

function watch () {
  const target = new EventEmitter()
  let clock = 0
  const calls: Array<[string, ForwardedSignal]> = []
  const stop = onShutdownSignals({
    first: (signal) => { calls.push(['first', signal]) },
    again: (signal) => { calls.push(['again', signal]) }
  }, target, () => clock)
  return { target, calls, stop, advance: (ms: number) => { clock += ms } }
}

t.test('the first signal drains; its copy within the window is let go', async (t) => {
  const { target, calls, advance } = watch()
  target.emit('SIGINT')
  t.same(calls, [['first', 'SIGINT']])
  target.emit('SIGINT')
  advance(DUPLICATE_WINDOW_MS - 1)
  target.emit('SIGTERM')
  t.same(calls, [['first', 'SIGINT']], 'both arrived before the window ended: neither exits')
})

t.test('a signal from the window on exits at once, as often as it comes', async (t) => {
  const { target, calls, advance } = watch()
  target.emit('SIGTERM')
  advance(DUPLICATE_WINDOW_MS)
  target.emit('SIGINT')
  advance(1)
  target.emit('SIGTERM')
  t.same(calls, [['first', 'SIGTERM'], ['again', 'SIGINT'], ['again', 'SIGTERM']])
})

t.test('other signals are not taken, and stopping removes the listeners', async (t) => {
  const { target, calls, stop } = watch()
  t.equal(target.listenerCount('SIGHUP'), 0, 'close-with-grace keeps the others')
  t.equal(target.listenerCount('SIGINT'), 1)
  stop()
  t.equal(target.listenerCount('SIGINT') + target.listenerCount('SIGTERM'), 0)
  target.emit('SIGINT')
  t.same(calls, [])
})
