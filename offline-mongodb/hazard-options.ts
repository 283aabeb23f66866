// The hazards a stand-in is asked for (hazards.ts): the options of start(), the CLI's --hazards
// and OFFLINE_MONGODB_HAZARDS, with their defaults and checks.

export interface HazardOptions {
  /** Decides every random choice: one seed, the same choices in the same order. */
  seed: number
  /** Each reply waits from 0 to this many ms before it is sent (20 by default; 0: none). */
  maxReplyDelayMs?: number
  /** The share of change stream batches answered empty at once, events waiting or not (0.25). */
  emptyBatches?: number
  /** The share of change stream batches cut short after 1 to 3 events (0.25). */
  shortBatches?: number
  /**
   * The majority commit point catches up with the latest write from 0 to this many ms after it
   * (50 by default); 0: it is always the latest write; 'manual': only when a test moves it.
   */
  majorityLagMs?: number | 'manual'
  /** Only the latest this many writes keep their pre-images (1000 by default). */
  imagesKept?: number
}

export type HazardSettings = Required<HazardOptions>

export const HAZARDS_VARIABLE = 'OFFLINE_MONGODB_HAZARDS'

const DEFAULTS = { maxReplyDelayMs: 20, emptyBatches: 0.25, shortBatches: 0.25, majorityLagMs: 50, imagesKept: 1000 }

/** The options with their defaults, or a RangeError naming the first that is wrong. */
export function hazardSettings (options: HazardOptions): HazardSettings {
  const settings = { ...DEFAULTS, ...options }
  const wrong = (name: string, rule: string, value: unknown): never => {
    throw new RangeError(`hazards: ${name} must be ${rule}, got ${String(value)}`)
  }
  const { seed, maxReplyDelayMs, emptyBatches, shortBatches, majorityLagMs, imagesKept } = settings
  if (!Number.isSafeInteger(seed)) wrong('seed', 'an integer', seed)
  if (!Number.isInteger(maxReplyDelayMs) || maxReplyDelayMs < 0) {
    wrong('maxReplyDelayMs', 'a whole number of ms', maxReplyDelayMs)
  }
  if (!(emptyBatches >= 0 && shortBatches >= 0 && emptyBatches + shortBatches <= 1)) {
    wrong('emptyBatches and shortBatches', 'shares from 0 to 1 in all', `${emptyBatches} and ${shortBatches}`)
  }
  if (majorityLagMs !== 'manual' && !(Number.isInteger(majorityLagMs) && majorityLagMs >= 0)) {
    wrong('majorityLagMs', "a whole number of ms or 'manual'", majorityLagMs)
  }
  if (!(Number.isInteger(imagesKept) && imagesKept >= 1) && imagesKept !== Infinity) {
    wrong('imagesKept', 'a positive integer', imagesKept)
  }
  return settings
}

/** Reads `<seed>` or a JSON object of HazardOptions (the CLI's --hazards, OFFLINE_MONGODB_HAZARDS). */
export function readHazards (text: string): HazardOptions {
  const trimmed = text.trim()
  if (/^-?\d+$/.test(trimmed)) return { seed: Number(trimmed) }
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    throw new RangeError(`hazards: expected a seed (an integer) or a JSON object with a seed, got '${text}'`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new RangeError(`hazards: expected a JSON object, got '${text}'`)
  }
  hazardSettings(parsed as HazardOptions)
  return parsed as HazardOptions
}

/** The hazards OFFLINE_MONGODB_HAZARDS asks for, if it is set and not empty. */
export function hazardsFromEnvironment (env: NodeJS.ProcessEnv = process.env): HazardOptions | undefined {
  const value = env[HAZARDS_VARIABLE]
  return value === undefined || value === '' ? undefined : readHazards(value)
}
