// The aggregation pipeline: the stages the service sends ($match, $sort, $skip, $limit, $count,
// $project of fields, $lookup with a pipeline, $unwind) and the demo writer's $sample done here
// as MongoDB does them; other
// stages, and $project with expressions, through mingo. The request's collation applies to
// every stage, $lookup's pipeline included (pipeline-collation.ts for the stages of mingo).
import { Aggregator } from 'mingo/aggregator'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { checkStageUnderCollation, groupUnderCollation } from './pipeline-collation.js'
import { queryContext } from './query-operators.js'
import { seededRandom } from './seeded-random.js'
import { collectionDocuments, count, scan, type Request } from './request.js'
import { compileProjection, isPlainProjection, parseSort, sortDocuments } from './sort-and-project.js'
import type { Doc } from './storage.js'

export function runPipeline (request: Request, docs: Doc[], pipeline: unknown): Doc[] {
  if (!Array.isArray(pipeline)) {
    throw new CommandError(14, 'TypeMismatch', "'pipeline' option must be specified as an array")
  }
  for (const stage of pipeline) {
    if (!isDocument(stage) || Object.keys(stage).length !== 1) {
      throw new CommandError(
        40323, 'Location40323', 'A pipeline stage specification object must contain exactly one field.'
      )
    }
    const [name, spec] = Object.entries(stage)[0] as [string, unknown]
    const { collation } = request
    if (name === '$match') docs = scan(request, docs, spec)
    else if (name === '$sort') docs = sortDocuments(docs, parseSort(spec), collation?.compare)
    else if (name === '$skip') docs = docs.slice(count(spec, '$skip', 0))
    else if (name === '$limit') docs = docs.slice(0, count(spec, '$limit', 0))
    else if (name === '$count') docs = docs.length === 0 ? [] : [{ [String(spec)]: docs.length }]
    else if (name === '$project' && isPlainProjection(spec)) docs = docs.map(compileProjection(spec))
    else if (name === '$lookup') docs = lookup(request, docs, spec)
    else if (name === '$unwind') docs = unwind(docs, spec)
    else if (name === '$sample') docs = sample(docs, spec)
    else {
      if (collation !== undefined) checkStageUnderCollation(name, spec)
      try {
        docs = name === '$group' && collation !== undefined
          ? groupUnderCollation(docs, spec, collation)
          : new Aggregator([stage], { context: queryContext, scriptEnabled: false }).run(docs) as Doc[]
        if (name === '$project' && isDocument(spec)) docs = docs.map((doc) => inSpecOrder(doc, spec))
      } catch (error) {
        if (error instanceof CommandError) throw error
        const message = error instanceof Error ? error.message : String(error)
        throw new CommandError(40324, 'Location40324', `Unrecognized or unsupported pipeline stage ${name}: ${message}`)
      }
    }
  }
  return docs
}

// Seeded, so that a process replays its samples (seeded-random.ts): no test sees Math.random.
const sampleRandom = seededRandom(0, '$sample')

/**
 * `$sample`: at most `size` of the documents, in random order, each once (manual, "$sample": a
 * random sort, unless a large collection lets it use a random cursor). mingo's draws with
 * replacement: it repeats documents, and gives `size` of them even when there are fewer or none.
 */
function sample (docs: Doc[], spec: unknown): Doc[] {
  if (!isDocument(spec)) {
    throw new CommandError(28745, 'Location28745', 'the $sample stage specification must be an object')
  }
  const unknown = Object.keys(spec).find((key) => key !== 'size')
  if (unknown !== undefined) {
    throw new CommandError(28748, 'Location28748', `unrecognized option to $sample: ${unknown}`)
  }
  if (!('size' in spec)) throw new CommandError(28749, 'Location28749', '$sample stage must specify a size')
  const { size } = spec
  if (typeof size !== 'number') {
    throw new CommandError(28746, 'Location28746', 'size argument to $sample must be a number')
  }
  // Truncated to a whole number first, as mongod does (-0.5 is 0).
  const whole = Math.trunc(size)
  if (!(whole >= 0)) throw new CommandError(28747, 'Location28747', 'size argument to $sample must not be negative')
  const out = docs.slice()
  // Fisher–Yates, as far as the sample goes.
  const taken = Math.min(whole, out.length)
  for (let i = 0; i < taken; i++) {
    const j = i + Math.floor(sampleRandom() * (out.length - i))
    ;[out[i], out[j]] = [out[j] as Doc, out[i] as Doc]
  }
  return out.slice(0, taken)
}

/** `$project` puts `_id` first, then the fields in the order the stage names them (mingo does not). */
function inSpecOrder (doc: Doc, spec: Doc): Doc {
  const out: Doc = {}
  for (const key of ['_id', ...Object.keys(spec)]) if (Object.hasOwn(doc, key)) out[key] = doc[key]
  return { ...out, ...doc }
}

/**
 * `$lookup` with `from` and a `pipeline` of its own (no `localField`, `foreignField` or `let`):
 * each document gets, as `as`, what the pipeline gives on `from` (a missing collection gives []).
 */
function lookup (request: Request, docs: Doc[], spec: unknown): Doc[] {
  if (!isDocument(spec) || typeof spec.from !== 'string' || typeof spec.as !== 'string' ||
    !Array.isArray(spec.pipeline)) {
    throw new CommandError(
      40321, 'Location40321', 'the offline database supports $lookup with from, pipeline and as only'
    )
  }
  if ('localField' in spec || 'foreignField' in spec || 'let' in spec) {
    throw new CommandError(
      40324, 'Location40324', '$lookup with localField, foreignField or let is not supported by the offline database'
    )
  }
  const from = collectionDocuments(request, spec.from)
  const as = spec.as
  return docs.map((doc) => ({ ...doc, [as]: runPipeline(request, from, spec.pipeline) }))
}

/**
 * `$unwind` of a top-level field: one document per element of its array. With
 * `preserveNullAndEmptyArrays`, a document whose field is missing or null is kept as it is, and
 * one whose array is empty is kept without the field (manual, "$unwind"); a value that is not an
 * array counts as an array of that one value.
 */
function unwind (docs: Doc[], spec: unknown): Doc[] {
  const options = typeof spec === 'string' ? { path: spec } : spec
  if (!isDocument(options) || typeof options.path !== 'string' || !/^\$[^.$]+$/.test(options.path)) {
    throw new CommandError(28812, 'Location28812', 'the offline database supports $unwind of a top-level field only')
  }
  const field = options.path.slice(1)
  const preserve = options.preserveNullAndEmptyArrays === true
  const out: Doc[] = []
  for (const doc of docs) {
    const value = doc[field]
    if (Array.isArray(value) && value.length > 0) {
      for (const element of value) out.push({ ...doc, [field]: element })
    } else if (Array.isArray(value)) {
      if (preserve) out.push(withoutField(doc, field))
    } else if (value === undefined || value === null) {
      if (preserve) out.push(doc)
    } else {
      out.push(doc)
    }
  }
  return out
}

function withoutField (doc: Doc, field: string): Doc {
  const copy = { ...doc }
  delete copy[field]
  return copy
}
