// The hazards' dice: a small seeded generator (mulberry32), so that one seed replays the same
// choices in the same order, and Math.random never decides what a test sees.

/** FNV-1a: turns a seed and what its numbers are for into the generator's 32-bit start. */
function hash (text: string): number {
  let h = 0x811C9DC5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/**
 * Numbers in [0, 1) from `seed`, one stream per `purpose` (a connection's reply delays, the
 * majority point's lag...): the draws of one stream never shift those of another.
 */
export function seededRandom (seed: number, ...purpose: Array<string | number>): () => number {
  let state = hash(`${seed}:${purpose.join(':')}`)
  return () => {
    state = (state + 0x6D2B79F5) | 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
