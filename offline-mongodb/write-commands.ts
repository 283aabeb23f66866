// The write commands: insert, update, delete, findAndModify, drop, dropDatabase and collMod
// (manual: each command's page). A statement that fails is a write error of its own; an
// ordered batch stops there, as mongod's does.
import type { Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { compileFilter } from './query-operators.js'
import { collectionName, type Request } from './request.js'
import { compileProjection, parseSort, sortDocuments } from './sort-and-project.js'
import type { Doc } from './storage.js'
import { applyOperators, applyReplacement, isOperatorUpdate } from './update-operators.js'
import { retryable } from './retryable-writes.js'
import { upsertDocument } from './upsert.js'
import { changeDocument, dropCollection, dropDatabase, insertDocument, removeDocument, type Target } from './writes.js'

function target (request: Request, key: string, create: boolean): Target | undefined {
  const coll = collectionName(request.cmd, key)
  const database = request.state.storage.database(request.db)
  const collection = create ? database.getOrCreate(coll) : database.get(coll)
  return collection === undefined ? undefined : { state: request.state, db: request.db, coll, collection }
}

function statements (request: Request, field: string): Doc[] {
  const list = request.cmd[field]
  if (list === undefined) return []
  if (!Array.isArray(list) || !list.every(isDocument)) {
    throw new CommandError(14, 'TypeMismatch',
      `BSON field '${Object.keys(request.cmd)[0] ?? ''}.${field}' is the wrong type, expected an array of objects`)
  }
  return list
}

/** Runs each statement; failures become `writeErrors`, and an ordered batch stops at the first. */
function eachStatement (request: Request, list: Doc[], run: (statement: Doc, index: number) => void): Doc[] {
  const writeErrors: Doc[] = []
  for (const [index, statement] of list.entries()) {
    try {
      run(statement, index)
    } catch (error) {
      if (!(error instanceof CommandError)) throw error
      writeErrors.push({ index, code: error.code, codeName: error.codeName, errmsg: error.message })
      if (request.cmd.ordered !== false) break
    }
  }
  return writeErrors
}

function withErrors (reply: Doc, writeErrors: Doc[]): Doc {
  return writeErrors.length > 0 ? { ...reply, writeErrors, ok: 1 } : { ...reply, ok: 1 }
}

function insert (request: Request): Doc {
  const into = target(request, 'insert', true) as Target
  let n = 0
  const writeErrors = eachStatement(request, statements(request, 'documents'), (doc) => {
    insertDocument(into, doc)
    n++
  })
  return withErrors({ n }, writeErrors)
}

const UPDATE_FIELDS = new Set(['q', 'u', 'upsert', 'multi', 'hint', 'arrayFilters', 'collation', 'c', 'sort'])

/** What the stand-in refuses in a statement rather than ignore: each would change the result. */
function refuseUnsupported (statement: Doc, command: string): void {
  for (const key of Object.keys(statement)) {
    if (!UPDATE_FIELDS.has(key)) {
      throw new CommandError(40415, 'Location40415', `BSON field '${command}.updates.${key}' is an unknown field.`)
    }
  }
  for (const key of ['arrayFilters', 'collation', 'c', 'sort']) {
    if (statement[key] !== undefined) {
      throw new CommandError(2, 'BadValue', `the offline database does not support '${key}' in ${command}`)
    }
  }
  if (Array.isArray(statement.u)) {
    throw new CommandError(2, 'BadValue', 'the offline database does not support pipeline-style updates')
  }
  if (!isDocument(statement.u)) {
    throw new CommandError(9, 'FailedToParse', `BSON field '${command}.updates.u' is missing or not an object`)
  }
  if (statement.q !== undefined && !isDocument(statement.q)) {
    throw new CommandError(14, 'TypeMismatch',
      `BSON field '${command}.updates.q' is the wrong type, expected type 'object'`)
  }
}

interface UpdateCounts { n: number, nModified: number }

/**
 * Updates the documents `matches` (or upserts one when there are none), counting into `counts`
 * as it goes, so that a failure part-way leaves the counts of what was done. Returns the
 * upserted document, if any.
 */
function updateMatches (
  request: Request, into: () => Target, matches: Doc[], query: Doc, update: Doc, upsert: boolean, counts: UpdateCounts
): Doc | undefined {
  const now = (): Timestamp => request.state.oplog.tick()
  if (matches.length === 0) {
    if (!upsert) return undefined
    const inserted = insertDocument(into(), upsertDocument(query, update, now))
    counts.n++
    return inserted
  }
  const operators = isOperatorUpdate(update)
  for (const doc of matches) {
    const outcome = operators ? applyOperators(doc, update, { inserting: false, now }) : applyReplacement(doc, update)
    counts.n++
    if (!outcome.changed) continue
    changeDocument(into(), doc, outcome.doc, operators ? outcome.description : undefined)
    counts.nModified++
  }
  return undefined
}

function update (request: Request): Doc {
  const counts: UpdateCounts = { n: 0, nModified: 0 }
  const upserted: Doc[] = []
  const writeErrors = eachStatement(request, statements(request, 'updates'), (statement, index) => {
    refuseUnsupported(statement, 'update')
    const u = statement.u as Doc
    const multi = statement.multi === true
    if (multi && !isOperatorUpdate(u)) {
      throw new CommandError(9, 'FailedToParse', 'multi update is not supported for replacement-style update')
    }
    const query = (statement.q ?? {}) as Doc
    const test = compileFilter(query)
    const docs = target(request, 'update', false)?.collection.docs ?? []
    const first = multi ? undefined : docs.find(test)
    const matches = multi ? docs.filter(test) : first === undefined ? [] : [first]
    const inserted = updateMatches(
      request, () => target(request, 'update', true) as Target, matches, query, u, statement.upsert === true, counts
    )
    if (inserted !== undefined) upserted.push({ index, _id: inserted._id })
  })
  return withErrors({ ...counts, ...(upserted.length > 0 ? { upserted } : {}) }, writeErrors)
}

function deleteCommand (request: Request): Doc {
  let n = 0
  const from = target(request, 'delete', false)
  const writeErrors = eachStatement(request, statements(request, 'deletes'), (statement) => {
    if (statement.collation !== undefined) {
      throw new CommandError(2, 'BadValue', "the offline database does not support 'collation' in delete")
    }
    const test = compileFilter(statement.q)
    if (from === undefined) return
    const matches = from.collection.docs.filter(test)
    for (const doc of Number(statement.limit) === 1 ? matches.slice(0, 1) : matches) {
      removeDocument(from, doc)
      n++
    }
  })
  return withErrors({ n }, writeErrors)
}

/** findAndModify: the first document by `sort`, removed or updated, returned before or after (`new`). */
function findAndModify (request: Request): Doc {
  const { cmd } = request
  const command = Object.keys(cmd)[0] as string
  const remove = cmd.remove === true
  const update = cmd.update
  if (remove && update !== undefined) {
    throw new CommandError(9, 'FailedToParse', 'Cannot specify both an update and remove=true')
  }
  if (!remove && update === undefined) {
    throw new CommandError(9, 'FailedToParse', 'Either an update or remove=true must be specified')
  }
  if (remove && cmd.upsert === true) {
    throw new CommandError(9, 'FailedToParse', 'Cannot specify both upsert=true and remove=true ')
  }
  if (remove && cmd.new === true) {
    throw new CommandError(9, 'FailedToParse',
      "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
  }
  for (const key of ['arrayFilters', 'collation', 'let']) {
    if (cmd[key] !== undefined) {
      throw new CommandError(2, 'BadValue', `the offline database does not support '${key}' in findAndModify`)
    }
  }
  if (Array.isArray(update)) {
    throw new CommandError(2, 'BadValue', 'the offline database does not support pipeline-style updates')
  }
  if (update !== undefined && !isDocument(update)) {
    throw new CommandError(9, 'FailedToParse',
      "BSON field 'findAndModify.update' is the wrong type, expected an object")
  }
  const project = compileProjection(cmd.fields)
  const query = isDocument(cmd.query) ? cmd.query : {}
  const existing = target(request, command, false)
  const found = sortDocuments((existing?.collection.docs ?? []).filter(compileFilter(query)), parseSort(cmd.sort))[0]
  if (remove) {
    if (found !== undefined && existing !== undefined) removeDocument(existing, found)
    return {
      lastErrorObject: { n: found === undefined ? 0 : 1 },
      value: found === undefined ? null : project(found),
      ok: 1
    }
  }
  const counts: UpdateCounts = { n: 0, nModified: 0 }
  const into = (): Target => target(request, command, true) as Target
  const inserted = updateMatches(
    request, into, found === undefined ? [] : [found], query, update as Doc, cmd.upsert === true, counts
  )
  const after = inserted ?? (found === undefined ? undefined : into().collection.findById(found._id))
  const value = cmd.new === true ? after : found
  const lastErrorObject: Doc = {
    n: counts.n,
    updatedExisting: found !== undefined,
    ...(inserted === undefined ? {} : { upserted: inserted._id })
  }
  return { lastErrorObject, value: value === undefined ? null : project(value), ok: 1 }
}

/** collMod: only `changeStreamPreAndPostImages` (manual: "collMod"); anything else is refused. */
function collMod (request: Request): Doc {
  const { cmd } = request
  const existing = target(request, 'collMod', false)
  if (existing === undefined) {
    throw new CommandError(26, 'NamespaceNotFound', `ns does not exist: ${request.db}.${String(cmd.collMod)}`)
  }
  const options = Object.keys(cmd).filter((key) => key !== 'collMod' && !key.startsWith('$') &&
    !['lsid', 'txnNumber', 'writeConcern', 'comment'].includes(key))
  const images = cmd.changeStreamPreAndPostImages
  if (options.some((key) => key !== 'changeStreamPreAndPostImages') || !isDocument(images) ||
    typeof images.enabled !== 'boolean') {
    throw new CommandError(2, 'BadValue',
      'the offline database supports collMod with changeStreamPreAndPostImages: { enabled: <boolean> } only')
  }
  existing.collection.recordsImages = images.enabled
  return { ok: 1 }
}

/**
 * create: a collection, with `changeStreamPreAndPostImages` as its only option (manual:
 * "create"). Like mongod 7.0+, creating an existing collection with the same options is
 * accepted, and with other options is error 48 NamespaceExists.
 */
function create (request: Request): Doc {
  const { cmd } = request
  const options = Object.keys(cmd).filter((key) => key !== 'create' && !key.startsWith('$') &&
    !['lsid', 'txnNumber', 'writeConcern', 'comment'].includes(key))
  const images = cmd.changeStreamPreAndPostImages
  if (options.some((key) => key !== 'changeStreamPreAndPostImages') ||
    (images !== undefined && (!isDocument(images) || typeof images.enabled !== 'boolean'))) {
    throw new CommandError(2, 'BadValue',
      'the offline database supports create with changeStreamPreAndPostImages: { enabled: <boolean> } only')
  }
  const existing = target(request, 'create', false)
  const wanted = isDocument(images) ? images.enabled as boolean : existing?.collection.recordsImages ?? true
  if (existing !== undefined) {
    if (existing.collection.recordsImages !== wanted) {
      throw new CommandError(48, 'NamespaceExists',
        `namespace ${request.db}.${String(cmd.create)} already exists, but with different options`)
    }
    return { ok: 1 }
  }
  const made = target(request, 'create', true) as Target
  made.collection.recordsImages = wanted
  return { ok: 1 }
}

export const WRITE_COMMANDS: Record<string, (request: Request) => Doc> = {
  create,
  insert: retryable(insert),
  update: retryable(update),
  delete: retryable(deleteCommand),
  findAndModify: retryable(findAndModify),
  findandmodify: retryable(findAndModify),
  collMod,
  drop: (request) => {
    const coll = collectionName(request.cmd, 'drop')
    dropCollection(request.state, request.db, coll)
    return { ns: `${request.db}.${coll}`, nIndexesWas: 1, ok: 1 }
  },
  dropDatabase: ({ db, state }) => {
    dropDatabase(state, db)
    return { dropped: db, ok: 1 }
  }
}
